import { test } from 'tap'
import ts from 'typescript'

/**
 * The public surface, values and types, as a user's compiler sees each entry point. A name
 * added or removed here is a change of the package's API: this list says so in review.
 */
const ENTRIES = {
  '.': 'lib/index.ts',
  './types': 'lib/types.ts',
  './errors': 'lib/errors.ts',
  './generics': 'lib/generics.ts',
  './bulk': 'lib/bulk.ts',
  './conditional': 'lib/conditional.ts',
  './access': 'lib/access.ts',
  './cache': 'lib/cache.ts',
  './streams': 'lib/streams.ts',
  './opentelemetry': 'lib/opentelemetry.ts',
  './prometheus': 'lib/prometheus.ts',
  './swagger': 'lib/openapi/swagger.ts',
  './sql': 'lib/stores/sql/index.ts'
} as const

function exportedNames (): Record<string, string[]> {
  const program = ts.createProgram(Object.values(ENTRIES), {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext
  })
  const checker = program.getTypeChecker()
  const out: Record<string, string[]> = {}
  for (const [entry, file] of Object.entries(ENTRIES)) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(file) as ts.SourceFile) as ts.Symbol
    out[entry] = checker.getExportsOfModule(module).map((symbol) => symbol.name).sort()
  }
  return out
}

test('the exported names of every entry point', async (t) => {
  const names = exportedNames()
  t.matchSnapshot(names, 'exported names')
  const internals = ['buildViewRoutes', 'etagOnSend', 'orderToken', 'weakMatch', 'strongMatch', 'parseEntityTags', 'parseHttpDate',
    'plural', 'pluralName', 'operationIdOf', 'componentName', 'documentedResponses', 'encodeCursor', 'decodeCursor', 'headerName', 'BULK_ACTIONS']
  t.same(internals.filter((name) => names['.'].includes(name)), [], 'helpers of the implementation are not part of the API')
  for (const [entry, file] of Object.entries(ENTRIES)) {
    const runtime = Object.keys(await import(`../${file.replace(/\.ts$/, '.js')}`) as object)
    t.same(runtime.filter((name) => !names[entry as keyof typeof ENTRIES].includes(name)), [], `${entry}: every value the module has is a declared export`)
  }
  // The root holds what a first app needs, every type is in `fastify-views/types`: an import of the
  // root stays one line, and a type added to the library does not grow it.
  t.ok(names['.'].length <= 60, `the root exports ${names['.'].length} names, at most 60`)
  const all = Object.values(names).flat()
  t.same(all.filter((name, i) => all.indexOf(name) !== i), [], 'each name has one entry point')
})
