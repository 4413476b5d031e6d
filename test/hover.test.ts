import { test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

// What an editor shows a user of `.with()`: the hover of their class, of a request parameter and of
// a typed base, and the message of the five most common mistakes. Measured with the language
// service of the TypeScript this repository builds with, over a file as a user writes it. The bounds
// keep the messages short and about the user's own code (they were 1.1-1.5 k characters naming
// internal types before `.with()`); the figures are printed for the record.

const root = fileURLToPath(new URL('..', import.meta.url))
const file = path.join(root, 'test', 'hover-sample.ts') // never written: served by the host below
const source = `
import { Type } from '@sinclair/typebox'
import { AsyncListAPIView, AsyncRetrieveAPIView, mix } from '../lib/index.js'
import { AsyncGenericViewSet, MemoryRepository, PaginationFilter, asyncRepository } from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String() })
const IdParams = Type.Object({ id: Type.Integer() })
const rows = new Map<number, { id: number, name: string }>()
export class Items extends mix(AsyncListAPIView, AsyncRetrieveAPIView).with({ responseSchema: Item, detailParams: IdParams }, {
  async list () { return [...rows.values()] },
  async retrieve (request) { return rows.get(request.params.id) ?? null }
}) {}
export const ReadOnly = mix(AsyncListAPIView, AsyncRetrieveAPIView)
export const Typed = mix(AsyncListAPIView, AsyncRetrieveAPIView).with({ responseSchema: Item, detailParams: IdParams })

const Book = Type.Object({ id: Type.Integer(), title: Type.String(), year: Type.Integer(), updated_at: Type.String({ format: 'date-time' }) })
const books = asyncRepository(new MemoryRepository<{ id: number, title: string, year: number, updated_at: string }>())
export const GenericBooks = AsyncGenericViewSet.with({ responseSchema: Book, repository: books })
const Books = mix(ConditionalMixin, AsyncGenericViewSet)
export const m1 = Books.with({ responseSchemas: Book })
export const m2 = Books.with({ responseSchema: Book, filter: PaginationFilter.with({ orderingFields: ['title', 'yaer'] }) })
export const m3 = PaginationFilter.with({ orderingField: ['title'] })
export const m4 = Books.with({ responseSchema: Book, repository: asyncRepository(new MemoryRepository<{ id: number, isbn: string }>()) })
export const m5 = Books.with({ responseSchema: Book, conditional: { lastModifiedField: 'updatedAt' } })
`

test('hovers and the messages of common mistakes are short and name the user’s code', async (t) => {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => [file],
    getScriptVersion: () => '1',
    getScriptSnapshot: (name) => name === file ? ts.ScriptSnapshot.fromString(source) : fs.existsSync(name) ? ts.ScriptSnapshot.fromString(fs.readFileSync(name, 'utf8')) : undefined,
    getCurrentDirectory: () => root,
    getCompilationSettings: () => config.options,
    getDefaultLibFileName: ts.getDefaultLibFilePath,
    fileExists: (name) => name === file || ts.sys.fileExists(name),
    readFile: (name) => name === file ? source : ts.sys.readFile(name)
  }
  const service = ts.createLanguageService(host)
  const hover = (needle: string, offset: number): string => {
    const info = service.getQuickInfoAtPosition(file, source.indexOf(needle) + offset)
    return ts.displayPartsToString(info?.displayParts ?? [])
  }

  const hovers = {
    'the user\'s class': { text: hover('class Items', 6), max: 20 },
    'the request of an action in .with()': { text: hover('retrieve (request', 10), max: 100 },
    'a mix(...) class': { text: hover('const ReadOnly', 6), max: 300 },
    'a typed class, two mixins': { text: hover('const Typed', 6), max: 450 },
    'a typed generic viewset': { text: hover('const GenericBooks', 6), max: 600 }
  }
  for (const [what, { text, max }] of Object.entries(hovers)) {
    t.comment(`${what}: ${text.length} characters`)
    t.ok(text.length > 0 && text.length <= max, `${what}: at most ${max} characters`)
  }
  t.equal(hovers['the request of an action in .with()'].text, '(parameter) request: ActionRequest<{\n    id: number;\n}, unknown, unknown>', 'the request names its params type')

  const messages = service.getSemanticDiagnostics(file).map((d) => ({ line: source.slice(0, d.start).split('\n').length, text: ts.flattenDiagnosticMessageText(d.messageText, '\n') }))
  const expected = [
    ['m1', 'unknown static responseSchemas: did you mean responseSchema?'],
    ['m2', 'the filter names yaer, a field the items do not have'],
    ['m3', 'unknown filter static orderingField: did you mean orderingFields?'],
    ['m4', 'the repository holds other items than responseSchema describes'],
    ['m5', 'Did you mean \'"updated_at"\'?']
  ]
  t.equal(messages.length, expected.length, 'one message per mistake, none elsewhere')
  for (const [name, sentence] of expected) {
    const line = source.split('\n').findIndex((l) => l.startsWith(`export const ${name} `)) + 1
    const message = messages.find((m) => m.line === line)?.text ?? ''
    t.comment(`${name}: ${message.length} characters: ${message}`)
    t.ok(message.includes(sentence), `${name}: says "${sentence}"`)
    t.ok(message.length <= 200, `${name}: one line of at most 200 characters`)
    t.notOk(message.includes('\n'), `${name}: no elaboration below it`)
  }
})
