import t, { test, type Test } from 'tap'
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { correct, mistakes, preludes, type Domain, type Mistake, type MistakeRequest } from './fixtures/mistakes.js'

// The library as a user meets it: the packed tarball installed into new TypeScript projects
// (strict, NodeNext, skipLibCheck off, declaration emit) with only what each feature's user
// installs, compiled with the TypeScript this repository builds with and with the newest one
// the registry serves.

// Installing from the registry and compiling with two TypeScript lines takes about two minutes
// on a busy two-core machine: more than the suite's per-file time-out.
t.setTimeout(600_000)

const run = promisify(execFile)
// The child processes are plain Node: tap hands its loaders to every child it sees start
// through NODE_OPTIONS, and the newest TypeScript's ESM launcher cannot load under them.
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TAP')))
const node = async (args: string[], cwd: string): Promise<unknown> => run('env', ['-u', 'NODE_OPTIONS', process.execPath, ...args], { cwd, env })
const root = fileURLToPath(new URL('..', import.meta.url))
const fixtures = path.join(root, 'test', 'fixtures', 'consumer')
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
const dev = (name: string): string => `${name}@${String(pkg.devDependencies[name])}`
const repoTsc = createRequire(path.join(root, 'package.json')).resolve('typescript/bin/tsc')

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'esnext.decorators'],
    strict: true,
    skipLibCheck: false,
    declaration: true,
    rootDir: 'src',
    outDir: 'out',
    types: ['node']
  },
  include: ['src']
}

const npm = async (cwd: string, args: string[]): Promise<string> =>
  (await run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd, env, maxBuffer: 16 << 20 })).stdout

/** A new project with these packages and these fixture files under `src/`: ES modules, or CommonJS as `npm init` makes it. */
async function project (dir: string, packages: string[], files: Record<string, string>, type: 'module' | 'commonjs' = 'module'): Promise<string> {
  mkdirSync(path.join(dir, 'src'), { recursive: true })
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: path.basename(dir), private: true, ...(type === 'module' ? { type } : {}) }))
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG))
  for (const [name, source] of Object.entries(files)) writeFileSync(path.join(dir, 'src', name), source)
  await npm(dir, ['install', ...packages])
  return dir
}

/** Compiles a project; the compiler's output on failure, `''` on success. */
async function compile (tsc: string, dir: string, outDir: string): Promise<string> {
  try {
    await node([tsc, '-p', dir, '--outDir', path.join(dir, outDir)], dir)
    return ''
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string, stderr?: string }
    return `${stdout ?? ''}${stderr ?? ''}` || String(error)
  }
}

const fixture = (name: string): string => readFileSync(path.join(fixtures, name), 'utf8')

/**
 * Whether the projects also compile with the newest TypeScript the registry serves. .ci/run turns
 * it off on the Node lines beside the primary one (FV_CONSUMER_NEWEST_TS=0): what the newest
 * compiler says does not depend on the runtime, and it is checked once.
 */
const NEWEST_TS = process.env.FV_CONSUMER_NEWEST_TS !== '0'

// The table of mistakes (test/fixtures/mistakes.ts) is a second TypeScript project in the app's
// directory: its files under mistakes/, one per row, beside the preludes they import.

const MISTAKES_TSCONFIG = {
  compilerOptions: { ...TSCONFIG.compilerOptions, declaration: false, rootDir: 'mistakes', outDir: 'out-mistakes' },
  include: ['mistakes']
}

/** What the runner prints for each file it starts. */
interface Started { row: string, started?: true, status?: number, body?: string, code?: unknown, message?: unknown }

/** Writes the table's project: the preludes, one correct file per domain, a file per row, and the runner. */
function writeMistakes (dir: string): void {
  const files = path.join(dir, 'mistakes')
  mkdirSync(files, { recursive: true })
  writeFileSync(path.join(dir, 'tsconfig.mistakes.json'), JSON.stringify(MISTAKES_TSCONFIG))
  const started: Array<{ row: string, file: string, request?: MistakeRequest }> = []
  for (const [name, source] of Object.entries(preludes)) writeFileSync(path.join(files, name), source)
  for (const [domain, { source, request }] of Object.entries(correct)) {
    writeFileSync(path.join(files, `ok-${domain}.ts`), source)
    started.push({ row: `ok-${domain}`, file: `./ok-${domain}.js`, request })
  }
  for (const { row, where, source, request } of mistakes) {
    writeFileSync(path.join(files, `m${row}.ts`), source)
    if (where !== 'compile') started.push({ row: `m${row}`, file: `./m${row}.js`, request })
  }
  // Starts each application in turn, and prints what came of it, one JSON line per file.
  writeFileSync(path.join(files, 'runner.ts'), `import type { FastifyInstance, InjectOptions } from 'fastify'

const files: Array<{ row: string, file: string, request?: InjectOptions }> = ${JSON.stringify(started, null, 2)}

for (const { row, file, request } of files) {
  let app: FastifyInstance | undefined
  try {
    const { build } = await import(file) as { build: () => Promise<FastifyInstance> }
    app = await build()
    const answer = request === undefined ? undefined : await app.inject(request)
    console.log(JSON.stringify({ row, started: true, status: answer?.statusCode, body: answer?.body }))
  } catch (error) {
    const { code, message } = error as { code?: unknown, message?: unknown }
    console.log(JSON.stringify({ row, code, message }))
  } finally {
    await app?.close()
  }
}
`)
}

/** An error of the compiler's output: the first line of its message, and the whole message. */
interface Diagnostic { first: string, message: string }

/**
 * The errors of `tsc --pretty false` by file name: `mistakes/m12.ts(14,7): error TS2322: ...`, and
 * the lines indented below it, which continue the message.
 */
function diagnostics (output: string): Map<string, Diagnostic[]> {
  const byFile = new Map<string, Diagnostic[]>()
  let last: Diagnostic | undefined
  for (const line of output.split('\n')) {
    const error = /^(\S[^(]*)\(\d+,\d+\): error TS\d+: (.*)$/.exec(line)
    if (error !== null) {
      last = { first: error[2], message: error[2] }
      const file = path.basename(error[1])
      byFile.set(file, [...(byFile.get(file) ?? []), last])
    } else if (/^\s/.test(line) && last !== undefined) {
      last.message += `\n${line.trim()}`
    } else if (line.trim() !== '') {
      byFile.set('', [...(byFile.get('') ?? []), { first: line, message: line }])
      last = undefined
    }
  }
  return byFile
}

/** The compiler's output for the table's project; `''` when nothing failed. */
async function compileMistakes (tsc: string, dir: string, emit: boolean): Promise<string> {
  try {
    await node([tsc, '-p', path.join(dir, 'tsconfig.mistakes.json'), '--pretty', 'false', ...(emit ? [] : ['--noEmit'])], dir)
    return ''
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string, stderr?: string }
    return `${stdout ?? ''}${stderr ?? ''}` || String(error)
  }
}

const describe = ({ row, mistake }: Mistake): string => `#${row} ${mistake}`
/** A failing assertion of a row with a gap is a TODO, which names the gap; the suite stays green. */
const todo = ({ gap }: Mistake): { todo?: string } => gap === undefined ? {} : { todo: gap }

/** Checks the compile-time rows in one compiler's output, and that everything else compiles. */
function checkCompiled (t: Test, label: string, output: string): void {
  const found = diagnostics(output)
  const clean = [...Object.keys(preludes), ...Object.keys(correct).map((domain) => `ok-${domain}.ts`), 'runner.ts',
    ...mistakes.filter(({ where }) => where !== 'compile').map(({ row }) => `m${row}.ts`), '']
  for (const file of clean) t.same((found.get(file) ?? []).map(({ message }) => message), [], `${label}: ${file || 'the project'} compiles`)
  for (const m of mistakes.filter(({ where }) => where === 'compile')) {
    const errors = found.get(`m${m.row}.ts`) ?? []
    t.ok(errors.length > 0, `${label}: ${describe(m)} is a compile error`)
    const messages = errors.map(({ message }) => message).join('\n')
    for (const text of m.texts) t.match(messages, text, `${label}: ${describe(m)}: the message says ${JSON.stringify(text)}`)
    const first = errors[0]?.first ?? ''
    t.ok(first.length <= 200, `${label}: ${describe(m)}: the first line is ${first.length} characters`, todo(m))
    if (m.common) t.match(first, m.texts[0], `${label}: ${describe(m)}: the first line names the problem and the fix`, todo(m))
  }
}

/** Checks what the runner printed for the correct files and the rows it started. */
function checkStarted (t: Test, output: string): void {
  const printed = new Map(output.split('\n').filter((line) => line.startsWith('{')).map((line) => {
    const result = JSON.parse(line) as Started
    return [result.row, result]
  }))
  for (const [domain, { status }] of Object.entries(correct)) {
    const result = printed.get(`ok-${domain}`)
    t.equal(result?.status, status, `the correct ${domain} code starts and answers ${status}`, { result })
  }
  for (const m of mistakes.filter(({ where }) => where !== 'compile')) {
    const result = printed.get(`m${m.row}`)
    if (m.where === 'registration') {
      t.equal(result?.code, m.code, `${describe(m)}: ${String(m.code)} when the app starts`, { result })
      for (const text of m.texts) t.match(String(result?.message), text, `${describe(m)}: the message says ${JSON.stringify(text)}`)
    } else {
      t.equal(result?.started, true, `${describe(m)}: the app starts`, { result })
      t.equal(result?.status, m.status, `${describe(m)}: ${m.request?.method ?? ''} ${m.request?.url ?? ''} answers ${String(m.status)}`, { result })
      for (const text of m.texts) t.match(String(result?.body), text, `${describe(m)}: the answer says ${JSON.stringify(text)}`)
      for (const text of m.lacks ?? []) t.notMatch(String(result?.body), text, `${describe(m)}: the answer has no ${JSON.stringify(text)}`)
    }
  }
}

test('the packed library in consumer projects', { timeout: 600_000 }, async (t) => {
  const work = mkdtempSync(path.join(tmpdir(), 'fastify-views-consumer-'))
  t.teardown(() => rmSync(work, { recursive: true, force: true }))
  const started = Date.now()

  const packed = JSON.parse(await npm(root, ['pack', '--json', '--pack-destination', work]))[0]
  const tarball = path.join(work, packed.filename as string)
  const shipped = new Set((packed.files as Array<{ path: string }>).map((f) => f.path))

  // Source maps point at what the package ships.
  for (const file of shipped) {
    if (!file.endsWith('.js.map')) continue
    const map = JSON.parse(readFileSync(path.join(root, file), 'utf8')) as { sources: string[], sourcesContent?: string[] }
    const missing = map.sources.filter(
      (source, i) => map.sourcesContent?.[i] == null && !shipped.has(path.posix.join(path.posix.dirname(file), source))
    )
    if (missing.length > 0) t.fail(`${file} points at ${missing.join(', ')}, which the package does not ship`)
  }

  const readme = readFileSync(path.join(root, 'README.md'), 'utf8')
  const block = /```ts\n(import Fastify[\s\S]*?)```/.exec(readme)
  t.ok(block, 'the README has its quick start code block')

  const common = [tarball, dev('fastify'), dev('@sinclair/typebox'), dev('@types/node')]
  const [app, sqliteOnly, postgresOnly, typebox1, commonjs] = await Promise.all([
    // @types/better-sqlite3 for the helpdesk of the table of mistakes.
    project(path.join(work, 'app'), [...common, dev('@fastify/swagger'), dev('@types/better-sqlite3'), dev('ioredis'), dev('@opentelemetry/api'), dev('prom-client'), ...(NEWEST_TS ? ['typescript-latest@npm:typescript@latest'] : [])], {
      'readme.ts': block?.[1] ?? '',
      'views.ts': fixture('views.ts'),
      'access.ts': fixture('access.ts'),
      'cache.ts': fixture('cache.ts'),
      'streams.ts': fixture('streams.ts'),
      'telemetry.ts': fixture('telemetry.ts')
    }),
    project(path.join(work, 'sqlite-only'), [...common, dev('@types/better-sqlite3')], { 'app.ts': fixture('sqlite-only.ts') }),
    project(path.join(work, 'postgres-only'), [...common, dev('pg'), dev('@types/pg')], { 'app.ts': fixture('postgres-only.ts') }),
    // What a user of typebox 1.x installs: no @sinclair/typebox, which npm brings as the library's peer.
    project(path.join(work, 'typebox1'), [tarball, dev('fastify'), dev('typebox'), dev('@fastify/type-provider-typebox'), dev('@types/node')], { 'app.ts': fixture('typebox1.ts') }),
    // A CommonJS project resolves the library and TypeBox under `require`: the declarations must meet TypeBox's CommonJS ones.
    project(path.join(work, 'commonjs'), [...common, dev('@fastify/swagger')], { 'app.ts': fixture('commonjs.ts') }, 'commonjs')
  ])
  t.comment(`packed and installed in ${Date.now() - started} ms`)

  const latestTsc = path.join(app, 'node_modules', 'typescript-latest', 'bin', 'tsc')
  const compilers: Record<string, string> = {
    [`TypeScript ${String(JSON.parse(readFileSync(path.join(path.dirname(repoTsc), '..', 'package.json'), 'utf8')).version)} (the repository's)`]: repoTsc,
    ...(NEWEST_TS ? { [`TypeScript ${String(JSON.parse(readFileSync(path.join(app, 'node_modules', 'typescript-latest', 'package.json'), 'utf8')).version)} (the newest)`]: latestTsc } : {})
  }
  if (NEWEST_TS) t.ok(!Object.keys(compilers)[1].startsWith('TypeScript 5.'), 'the newest TypeScript is a later line than 5.x')
  for (const [label, tsc] of Object.entries(compilers)) {
    const out = label.includes('newest') ? 'out-latest' : 'out'
    t.equal(await compile(tsc, app, out), '', `${label}: the README code and exported mix(...) classes compile with declaration emit`)
    t.equal(await compile(tsc, sqliteOnly, out), '', `${label}: an SQLite-only app compiles without pg's types`)
    t.equal(await compile(tsc, postgresOnly, out), '', `${label}: a PostgreSQL-only app compiles without better-sqlite3's types`)
    t.equal(await compile(tsc, typebox1, out), '', `${label}: an app on typebox 1.x and @fastify/type-provider-typebox 6 compiles, with declaration emit`)
    t.equal(await compile(tsc, commonjs, out), '', `${label}: the README app in a CommonJS project compiles, with declaration emit`)
  }
  t.match(String((await node([path.join(commonjs, 'out', 'app.js')], commonjs) as { stdout: string }).stdout), /commonjs app ok: CommonJS, documented \/items \/items\/\{id\} \/items\/count/,
    'and runs as CommonJS, loading the library through require()')
  t.ok(existsSync(path.join(typebox1, 'node_modules', '@sinclair', 'typebox')), 'npm installed the @sinclair/typebox peer for the typebox 1.x app')
  t.match(String((await node([path.join(typebox1, 'out', 'app.js')], typebox1) as { stdout: string }).stdout), /typebox 1\.x app ok/, 'the typebox 1.x app answers through its views and its own routes')
  t.notOk(existsSync(path.join(sqliteOnly, 'node_modules', '@types', 'pg')), 'the SQLite-only project has no pg types')
  t.notOk(existsSync(path.join(postgresOnly, 'node_modules', '@types', 'better-sqlite3')), 'the PostgreSQL-only project has no better-sqlite3 types')

  // The README's code, run as written: it listens on port 3000.
  const server = spawn('env', ['-u', 'NODE_OPTIONS', process.execPath, path.join(app, 'out', 'readme.js')], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  server.stdout.on('data', (chunk) => { output += String(chunk) })
  server.stderr.on('data', (chunk) => { output += String(chunk) })
  t.teardown(() => { server.kill() })
  const answer = async (url: string): Promise<Response> => {
    for (let i = 0; i < 100; i++) {
      try { return await fetch(url) } catch { await new Promise((resolve) => setTimeout(resolve, 100)) }
      if (server.exitCode !== null) break
    }
    throw new Error(`the README app did not answer ${url}: ${output}`)
  }
  const list = await answer('http://127.0.0.1:3000/items')
  t.same(await list.json(), [{ id: 1, name: 'Lamp' }], 'GET /items')
  t.same(await (await answer('http://127.0.0.1:3000/items/1')).json(), { id: 1, name: 'Lamp' }, 'GET /items/1')
  t.same(await (await answer('http://127.0.0.1:3000/items/count')).json(), { count: 1 }, 'GET /items/count')
  const bad = await answer('http://127.0.0.1:3000/items/abc')
  t.equal(bad.status, 400, 'GET /items/abc is a 400')
  t.match(bad.headers.get('content-type'), /^application\/problem\+json/)

  // The table of mistakes, as the user meets each: from the compiler, when the app starts, or in
  // a request. Compiled with both lines (the repository's emits the JS the runner starts), then
  // started with plain Node; better-sqlite3 is the repository's own build, linked rather than
  // installed (its install compiles or downloads a native binary).
  const tableStarted = Date.now()
  writeMistakes(app)
  symlinkSync(path.join(root, 'node_modules', 'better-sqlite3'), path.join(app, 'node_modules', 'better-sqlite3'), 'junction')
  const [repoOutput, latestOutput] = await Promise.all([compileMistakes(repoTsc, app, true), NEWEST_TS ? compileMistakes(latestTsc, app, false) : ''])
  const [repoLabel, latestLabel] = Object.keys(compilers)
  checkCompiled(t, repoLabel, repoOutput)
  if (latestLabel !== undefined) checkCompiled(t, latestLabel, latestOutput)
  const { stdout } = await node([path.join(app, 'out-mistakes', 'runner.js')], app) as { stdout: string }
  checkStarted(t, stdout)
  t.comment(`the table of mistakes took ${Date.now() - tableStarted} ms`)
  t.comment(`consumer test took ${Date.now() - started} ms`)
})

test('the table of mistakes', async (t) => {
  const rows = mistakes.map(({ row }) => row)
  t.same(rows, rows.map((_, i) => i + 1), 'its rows are numbered 1, 2, 3, ...')
  t.ok(mistakes.length >= 50, `${mistakes.length} mistakes`)
  const domains = new Set<Domain>(mistakes.map(({ domain }) => domain))
  t.equal(domains.size, 3, 'over three APIs')
  t.equal(mistakes.filter(({ common }) => common === true).length, 10, 'ten of them marked the most common')
  for (const m of mistakes) {
    t.ok(m.texts.length > 0 || m.where === 'never', `${describe(m)}: says what its message contains`)
    if (m.where === 'registration') t.match(m.code, /^FV_ERR_/, `${describe(m)}: names its code`)
    if (m.where === 'request' || m.where === 'never') t.ok(m.why !== undefined && m.request !== undefined && m.status !== undefined, `${describe(m)}: says why, and what a request gets`)
    if (m.where === 'never') t.ok(m.gap, `${describe(m)}: a mistake nothing catches is a gap`)
  }
  // docs/errors.md shows the counts.
  const docs = readFileSync(path.join(root, 'docs', 'errors.md'), 'utf8')
  const count = (where: Mistake['where']): number => mistakes.filter((m) => m.where === where).length
  t.match(docs, `test/fixtures/mistakes.ts\` holds ${mistakes.length} mistakes`, 'docs/errors.md: the number of mistakes')
  for (const [where, label] of [['compile', 'At compile time'], ['registration', 'When the application starts'], ['request', 'At request time'], ['never', 'Never']] as const) {
    t.match(docs, `| ${label} | ${count(where)} |`, `docs/errors.md: ${label.toLowerCase()}, ${count(where)}`)
  }
})
