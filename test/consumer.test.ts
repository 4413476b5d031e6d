import t, { test } from 'tap'
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

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

/** A new project with these packages and these fixture files under `src/`. */
async function project (dir: string, packages: string[], files: Record<string, string>): Promise<string> {
  mkdirSync(path.join(dir, 'src'), { recursive: true })
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: path.basename(dir), private: true, type: 'module' }))
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
    const missing = map.sources.filter((source, i) => map.sourcesContent?.[i] == null && !shipped.has(path.posix.join(path.posix.dirname(file), source)))
    if (missing.length > 0) t.fail(`${file} points at ${missing.join(', ')}, which the package does not ship`)
  }

  const readme = readFileSync(path.join(root, 'README.md'), 'utf8')
  const block = /```ts\n(import Fastify[\s\S]*?)```/.exec(readme)
  t.ok(block, 'the README has its quick start code block')

  const common = [tarball, dev('fastify'), dev('@sinclair/typebox'), dev('@types/node')]
  const [app, sqliteOnly, postgresOnly, typebox1] = await Promise.all([
    project(path.join(work, 'app'), [...common, dev('@fastify/swagger'), 'typescript-latest@npm:typescript@latest'], {
      'readme.ts': block?.[1] ?? '',
      'views.ts': fixture('views.ts')
    }),
    project(path.join(work, 'sqlite-only'), [...common, dev('@types/better-sqlite3')], { 'app.ts': fixture('sqlite-only.ts') }),
    project(path.join(work, 'postgres-only'), [...common, dev('pg'), dev('@types/pg')], { 'app.ts': fixture('postgres-only.ts') }),
    // What a user of typebox 1.x installs: no @sinclair/typebox, which npm brings as the library's peer.
    project(path.join(work, 'typebox1'), [tarball, dev('fastify'), dev('typebox'), dev('@fastify/type-provider-typebox'), dev('@types/node')], { 'app.ts': fixture('typebox1.ts') })
  ])
  t.comment(`packed and installed in ${Date.now() - started} ms`)

  const latestTsc = path.join(app, 'node_modules', 'typescript-latest', 'bin', 'tsc')
  const compilers = {
    [`TypeScript ${String(JSON.parse(readFileSync(path.join(path.dirname(repoTsc), '..', 'package.json'), 'utf8')).version)} (the repository's)`]: repoTsc,
    [`TypeScript ${String(JSON.parse(readFileSync(path.join(app, 'node_modules', 'typescript-latest', 'package.json'), 'utf8')).version)} (the newest)`]: latestTsc
  }
  t.ok(!Object.keys(compilers)[1].startsWith('TypeScript 5.'), 'the newest TypeScript is a later line than 5.x')
  for (const [label, tsc] of Object.entries(compilers)) {
    const out = label.includes('newest') ? 'out-latest' : 'out'
    t.equal(await compile(tsc, app, out), '', `${label}: the README code and exported mix(...) classes compile with declaration emit`)
    t.equal(await compile(tsc, sqliteOnly, out), '', `${label}: an SQLite-only app compiles without pg's types`)
    t.equal(await compile(tsc, postgresOnly, out), '', `${label}: a PostgreSQL-only app compiles without better-sqlite3's types`)
    t.equal(await compile(tsc, typebox1, out), '', `${label}: an app on typebox 1.x and @fastify/type-provider-typebox 6 compiles, with declaration emit`)
  }
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
  t.comment(`consumer test took ${Date.now() - started} ms`)
})
