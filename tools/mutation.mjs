// Mutation testing of one module or more: each mutant StrykerJS would make, applied alone, against the tests that exercise the module.
//
//   npm run mutation -- lib/http/preconditions.ts [more modules] [--sample N] [--seed S] [--timeout MS] [--tests a.test.ts,b.test.ts] [--lines 55,165]
//
// The mutants come from @stryker-mutator/instrumenter (the mutators of @stryker-mutator/core). The
// working tree is never written: the script transpiles lib/, test/ and examples/ once into a
// sandbox in the system's temporary folder, then for each mutant writes only the mutated module's
// JavaScript there, runs the module's test files one after another with plain Node (tap's
// assertions, no tap runner, no TypeScript loader: a few seconds a file), stops at the first
// failure, and puts the original back. Not part of `npm test` (docs/testing.md).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import ts from 'typescript'
import { Instrumenter } from '@stryker-mutator/instrumenter'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * The test files that exercise each module, the quickest and most specific first: a mutant is
 * usually killed by the first one. A module that is not listed needs `--tests`. `LIMITS` and
 * `VALIDATION` leave out the one test of their file that runs a TypeScript file (`examples/server.ts`,
 * `test/fixtures/formats.ts`) in a child process through tap's loader, which the sandbox does not have.
 */
const LIMITS = { file: 'patch-limits', skip: 'a server with a 96 MiB heap' }
/** `validation` less its one test that runs a TypeScript fixture in a child process. */
const VALIDATION = { file: 'validation', skip: 'formats: importing the library' }
const TESTS = {
  'lib/http/json-patch.ts': ['json-patch', 'patch', LIMITS],
  'lib/http/merge-patch.ts': ['patch', 'json-patch', LIMITS],
  'lib/http/patch-budget.ts': ['json-patch', LIMITS, 'patch'],
  'lib/http/patch-error.ts': ['json-patch', 'patch', LIMITS],
  'lib/http/preconditions.ts': ['conditional', 'optimistic'],
  'lib/http/media-type.ts': ['unexpected-content', 'media-types', 'patch', 'json-patch', 'errors'],
  'lib/http/allowed-methods.ts': ['method-not-allowed'],
  'lib/registration/content.ts': ['unexpected-content', 'configuration-errors', 'media-types'],
  'lib/http/problem.ts': ['errors', VALIDATION, 'plugin', 'error-format', 'media-types'],
  'lib/http/error-format.ts': ['error-format', 'method-not-allowed', 'error-format-client', 'errors', 'configuration-errors'],
  'lib/http/problem-schema.ts': ['openapi', 'error-format'],
  'lib/openapi/operation.ts': ['openapi', 'openapi-statuses', 'error-format'],
  'lib/http/errors.ts': ['errors', 'api-view'],
  'lib/http/response-headers.ts': ['plugin', 'openapi', 'conditional'],
  'lib/http/request-parts.ts': ['errors', 'filters', VALIDATION],
  'lib/views/conditional.ts': ['conditional', 'versioned', 'optimistic', 'openapi', 'configuration-errors'],
  'lib/views/versioned.ts': ['versioned', 'conditional'],
  'lib/views/patch.ts': ['patch', 'json-patch', 'media-types', LIMITS],
  'lib/query/filters.ts': ['filters', 'pagination', 'generics', 'hostile-queries', 'configuration-errors', 'sqlite'],
  'lib/query/pagination.ts': ['pagination', 'filters', 'generics', 'sqlite'],
  'lib/query/page-number.ts': ['pagination', 'filters', 'generics'],
  'lib/query/offset.ts': ['pagination', 'filters', 'generics'],
  'lib/query/cursor.ts': ['pagination', 'filters', 'generics', 'sqlite'],
  'lib/query/counted-page.ts': ['pagination', 'generics', 'sqlite'],
  'lib/query/pagination-protocol.ts': ['pagination', 'filters', 'generics', 'sqlite'],
  'lib/views/generic-list.ts': ['pagination', 'generics', 'nested'],
  'lib/views/parent.ts': ['nested'],
  'lib/views/object-permissions.ts': ['nested'],
  'lib/views/envelope.ts': ['envelope'],
  'lib/views/links.ts': ['nested'],
  'lib/registration/prefix-params.ts': ['nested', 'configuration-errors'],
  'lib/stores/sql/builder.ts': ['sqlite', 'sql-retry', 'postgres'],
  'lib/stores/sql/operations.ts': ['sqlite', 'sql-retry', 'postgres'],
  'lib/stores/sql/values.ts': ['sqlite', 'postgres'],
  'lib/stores/sql/columns.ts': ['column-facts', 'sqlite', 'sql-decode', 'postgres'],
  'lib/stores/sql/decode.ts': ['sql-decode', 'sqlite', 'postgres'],
  'lib/stores/sql/errors.ts': ['sql-retry', 'sqlite', 'sqlite-lock-wait', 'postgres'],
  'lib/stores/sql/expression.ts': ['sql-query', 'sqlite', 'postgres'],
  'lib/stores/sql/nesting.ts': ['sql-transaction', 'sqlite', 'postgres'],
  'lib/stores/sql/postgres-dialect.ts': ['postgres'],
  'lib/stores/sql/postgres.ts': ['postgres'],
  'lib/stores/sql/run.ts': ['sqlite', 'sql-transaction', 'sql-retry'],
  'lib/stores/sql/scope.ts': ['sql-transaction', 'sqlite', 'postgres'],
  'lib/stores/sql/sqlite-async.ts': ['sqlite', 'sql-transaction', 'sqlite-lock-wait', 'node-sqlite'],
  'lib/stores/sql/sqlite-dialect.ts': ['sqlite', 'sql-query'],
  'lib/stores/sql/sqlite-transaction.ts': ['sql-transaction', 'sqlite', 'sqlite-lock-wait'],
  'lib/stores/sql/sqlite.ts': ['sqlite', 'sql-transaction', 'node-sqlite']
}

const USAGE = 'usage: npm run mutation -- <lib/module.ts> [more modules] [--sample N] [--seed S] [--timeout MS] [--tests a.test.ts,b.test.ts] [--lines 55,165]'

function options () {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      sample: { type: 'string' },
      seed: { type: 'string', default: '1' },
      timeout: { type: 'string' },
      tests: { type: 'string' },
      lines: { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    }
  })
  if (values.help === true || positionals.length === 0) {
    console.log(USAGE)
    process.exit(values.help === true ? 0 : 2)
  }
  const modules = positionals.map((m) => path.relative(ROOT, path.resolve(m)).split(path.sep).join('/'))
  for (const m of modules) {
    if (!fs.existsSync(path.join(ROOT, m)) || !m.startsWith('lib/') || !m.endsWith('.ts')) throw new Error(`${m}: not a module of lib/`)
    if (values.tests === undefined && TESTS[m] === undefined) throw new Error(`${m}: no test files are listed for it in tools/mutation.mjs; name them with --tests`)
  }
  const tests = values.tests?.split(',').map((f) => ({ file: path.basename(f.trim()).replace(/\.test\.ts$/, '') }))
  const number = (name, text) => {
    const n = Number(text)
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name} takes a whole number, not ${text}`)
    return n
  }
  return {
    modules,
    testsOf: (m) => tests ?? TESTS[m].map((entry) => typeof entry === 'string' ? { file: entry } : entry),
    sample: values.sample === undefined ? undefined : number('sample', values.sample),
    seed: number('seed', values.seed),
    timeout: values.timeout === undefined ? undefined : number('timeout', values.timeout),
    // Only the mutants that start on these lines (of every module named), before any sampling.
    lines: values.lines?.split(',').map((l) => number('lines', l.trim()))
  }
}

/** mulberry32: a small seeded generator, so that one seed always samples the same mutants. */
function random (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `count` of `items`, chosen by a seeded shuffle, in their original order. */
function sample (items, count, seed) {
  if (count === undefined || count >= items.length) return items
  const next = random(seed)
  const order = items.map((_, i) => i)
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[order[i], order[j]] = [order[j], order[i]]
  }
  return order.slice(0, count).sort((a, b) => a - b).map((i) => items[i])
}

const compilerOptions = (() => {
  const file = path.join(ROOT, 'tsconfig.json')
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(file, ts.sys.readFile).config, ts.sys, ROOT)
  const { rootDir, outDir, ...rest } = parsed.options
  // Every file of the package is an ES module (`"type": "module"`); transpileModule does not read package.json to know it.
  return {
    ...rest,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    sourceMap: false,
    declaration: false
  }
})()

/** The JavaScript of one TypeScript source, as the suite's loader makes it (transpiled, not type-checked). */
function transpile (source, fileName) {
  const out = ts.transpileModule(
    source,
    { compilerOptions, fileName: path.join(ROOT, fileName), reportDiagnostics: true }
  )
  const errors = (out.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error)
  if (errors.length > 0) throw new Error(ts.flattenDiagnosticMessageText(errors[0].messageText, '\n'))
  return out.outputText
}

function tsFiles (dir) {
  const found = []
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`
    if (entry.isDirectory()) {
      if (rel !== 'test/types' && rel !== 'test/fixtures/consumer') found.push(...tsFiles(rel))
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(rel)
  }
  return found
}

/** A copy of the package to run tests in: package.json (for the `fastify-views` self-import), node_modules linked, the sources transpiled to build/. */
function makeSandbox () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fastify-views-mutation-'))
  try {
    fill(dir)
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return dir
}

function fill (dir) {
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'))
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  for (const rel of ['lib', 'test', 'examples'].flatMap(tsFiles)) {
    const target = path.join(dir, 'build', rel.replace(/\.ts$/, '.js'))
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.writeFileSync(target, transpile(fs.readFileSync(path.join(ROOT, rel), 'utf8'), rel))
  }
}

/** Runs one compiled test file (less the tests `skip` names); resolves to 'passed', 'failed' or 'timeout', how long it took, and the end of its output. */
function runTest (sandbox, { file, skip }, timeout) {
  return new Promise((resolve) => {
    const started = Date.now()
    // TAP_TIMEOUT as .taprc sets it for the tap runner: without it tap's default (30 s a file) ends a slow file (postgres.test.ts on a busy machine).
    const env = { ...process.env, TAP_BAIL: '1', TAP_TIMEOUT: '120', ...(skip === undefined ? {} : { TAP_GREP: skip, TAP_INVERT: '1' }) }
    // Its own process group, so that a timeout ends the servers a test started too.
    const child = spawn(process.execPath, ['--conditions=fastify-views-build', path.join('build', 'test', `${file}.test.js`)], {
      cwd: sandbox, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env
    })
    let output = ''
    const keep = (chunk) => { output = (output + chunk).slice(-4000) }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    let timedOut = false
    const timer = timeout === undefined
      ? undefined
      : setTimeout(() => {
        timedOut = true
        try { process.kill(-child.pid, 'SIGKILL') } catch {}
      }, timeout)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ outcome: timedOut ? 'timeout' : code === 0 ? 'passed' : 'failed', ms: Date.now() - started, output })
    })
  })
}

const label = ({ file, skip }) => `test/${file}.test.ts${skip === undefined ? '' : ` (less "${skip}")`}`

const logger = (() => {
  const no = () => false
  const quiet = () => {}
  return {
    isTraceEnabled: no,
    isDebugEnabled: no,
    isInfoEnabled: no,
    isWarnEnabled: no,
    isErrorEnabled: () => true,
    isFatalEnabled: () => true,
    trace: quiet,
    debug: quiet,
    info: quiet,
    warn: quiet,
    error: console.error,
    fatal: console.error
  }
})()

/** Every mutant of a module, each with the source text it replaces and its 1-based line. */
async function mutantsOf (module, source) {
  const result = await new Instrumenter(logger).instrument(
    [{ name: module, content: source, mutate: true }],
    { plugins: null, excludedMutations: [], ignorers: [] }
  )
  const lines = source.split('\n')
  const offset = (p) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.column
  return result.mutants.map((m) => {
    const start = offset(m.location.start)
    const end = offset(m.location.end)
    return {
      id: m.id,
      mutator: m.mutatorName,
      line: m.location.start.line + 1,
      column: m.location.start.column + 1,
      start,
      end,
      original: source.slice(start, end),
      replacement: m.replacement
    }
  })
}

const flat = (code) => code.replace(/\s+/g, ' ').trim()

/** The original and the replacement on one line each; when long, only where they differ, with a little context. */
function change (original, replacement, max = 70) {
  const [a, b] = [flat(original), flat(replacement)]
  if (a.length <= max && b.length <= max) return [a, b]
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let end = 0
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++
  const from = Math.max(0, start - 20)
  const cut = (text) => {
    const to = Math.min(text.length, text.length - end + 20)
    const part = text.slice(from, to)
    return `${from > 0 ? '…' : ''}${part.length > max ? `${part.slice(0, max - 1)}…` : part}${to < text.length && part.length <= max ? '…' : ''}`
  }
  return [cut(a), cut(b)]
}

async function main () {
  const opts = options()
  const started = Date.now()
  console.log('transpiling lib/, test/ and examples/ into a sandbox...')
  const sandbox = makeSandbox()
  const cleanup = () => { fs.rmSync(sandbox, { recursive: true, force: true }) }
  process.on('SIGINT', () => { cleanup(); process.exit(130) })
  process.on('SIGTERM', () => { cleanup(); process.exit(143) })
  const rows = []
  try {
    for (const module of opts.modules) {
      const tests = opts.testsOf(module)
      const source = fs.readFileSync(path.join(ROOT, module), 'utf8')
      const compiled = path.join(sandbox, 'build', module.replace(/\.ts$/, '.js'))
      const original = fs.readFileSync(compiled, 'utf8')
      // The tests must pass as they are; their times set each file's time limit.
      const limits = {}
      for (const test of tests) {
        const { outcome, ms, output } = await runTest(sandbox, test, 600_000)
        if (outcome !== 'passed') throw new Error(`${output}\n${label(test)} does not pass without mutants: fix it first (or leave it out with --tests)`)
        limits[test.file] = opts.timeout ?? Math.max(10_000, 3 * ms + 5_000)
        console.log(`  ${label(test)} passes in ${(ms / 1000).toFixed(1)} s`)
      }
      const all = (await mutantsOf(module, source)).filter(
        (m) => opts.lines === undefined || opts.lines.includes(m.line)
      )
      const chosen = sample(all, opts.sample, opts.seed)
      console.log(`${module}: ${all.length} mutants, ${chosen.length} run (seed ${opts.seed}), against ${tests.map(label).join(', ')}`)
      const row = {
        module,
        total: all.length,
        sampled: chosen.length,
        killed: 0,
        timeout: 0,
        survived: 0,
        invalid: 0,
        survivors: []
      }
      for (const [i, m] of chosen.entries()) {
        let status = 'survived'
        let by = ''
        try {
          fs.writeFileSync(compiled, transpile(source.slice(0, m.start) + m.replacement + source.slice(m.end), module))
        } catch {
          status = 'invalid'
        }
        if (status === 'survived') {
          for (const test of tests) {
            const { outcome } = await runTest(sandbox, test, limits[test.file])
            if (outcome !== 'passed') {
              status = outcome === 'timeout' ? 'timeout' : 'killed'
              by = test.file
              break
            }
          }
        }
        fs.writeFileSync(compiled, original)
        row[status]++
        if (status === 'survived') row.survivors.push(m)
        const where = `${module}:${m.line}:${m.column}`
        console.log(`  [${i + 1}/${chosen.length}] ${status.padEnd(8)} ${where} ${m.mutator}${by === '' ? '' : ` (test/${by}.test.ts)`}`)
      }
      rows.push(row)
    }
  } finally {
    cleanup()
  }
  report(rows, opts, Date.now() - started)
}

function report (rows, opts, ms) {
  const score = (r) => {
    const valid = r.killed + r.timeout + r.survived
    return valid === 0 ? 'n/a' : `${Math.floor((100 * (r.killed + r.timeout)) / valid)} %`
  }
  const command = `npm run mutation -- ${opts.modules.join(' ')}${opts.sample === undefined ? '' : ` --sample ${opts.sample} --seed ${opts.seed}`}` +
    `${opts.lines === undefined ? '' : ` --lines ${opts.lines.join(',')}`}`
  console.log(`\n${command}   (${Math.round(ms / 1000)} s)\n`)
  console.log('| module | mutants | sampled | killed | survived | score |')
  console.log('|---|---:|---:|---:|---:|---:|')
  for (const r of rows) {
    const invalid = r.invalid === 0 ? '' : ` (+${r.invalid} not valid code)`
    console.log(`| \`${r.module}\` | ${r.total} | ${r.sampled}${invalid} | ${r.killed + r.timeout} | ${r.survived} | ${score(r)} |`)
  }
  const survivors = rows.flatMap((r) => r.survivors.map((m) => ({ ...m, module: r.module })))
  if (survivors.length > 0) {
    console.log('\nSurvivors:')
    for (const m of survivors) {
      const [original, replacement] = change(m.original, m.replacement)
      console.log(`- \`${m.module}:${m.line}\` ${m.mutator}: \`${original}\` -> \`${replacement}\``)
    }
  }
  console.log('\nScore: (killed + timed out) / (sampled - not valid code). A mutant that times out is counted as killed.')
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
