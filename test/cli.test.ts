import { test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { main, USAGE } from '../lib/cli.js'
import { documentedApp } from '../examples/app.js'

// `fastify-views openapi`: the document of an application loaded without listening, written or
// checked against a file (docs/openapi.md, "From the command line").

const APPS = 'test/fixtures/cli/apps.ts'

/** Runs the command in this process, collecting what it prints. */
async function run (...argv: string[]): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const code = await main(argv, { out: (text) => { out += text }, err: (text) => { err += text } })
  return { code, out, err }
}

test('the example\'s document is what app.swagger() gives, as JSON and as YAML', async (t) => {
  const app = await documentedApp()
  t.teardown(() => app.close())
  await app.ready()
  const json = await run('openapi', 'examples/app.ts:documentedApp')
  t.equal(json.code, 0)
  t.equal(json.err, '')
  t.equal(json.out, JSON.stringify(app.swagger(), null, 2) + '\n', 'standard output: the document, indented JSON')
  t.ok(JSON.parse(json.out).paths['/items/events'], 'the whole document, event stream included')

  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-cli-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = path.join(dir, 'openapi.yaml')
  t.equal((await run('openapi', 'examples/app.ts:documentedApp', '--out', file)).code, 0)
  t.equal(readFileSync(file, 'utf8'), app.swagger({ yaml: true }), 'a .yaml file: YAML')
})

test('--check: 0 while the file holds the document, 1 naming the file and the fix once it does not', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-cli-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = path.join(dir, 'openapi.json')
  const missing = await run('openapi', APPS, '--out', file, '--check')
  t.equal(missing.code, 1)
  t.equal(missing.err, `${file} does not exist: write it with fastify-views openapi ${APPS} --out ${file}\n`)
  t.equal((await run('openapi', APPS, '--out', file)).code, 0, 'written')
  t.equal(JSON.parse(readFileSync(file, 'utf8')).info.title, 'Ping', 'the default export, a function, built the application')
  const current = await run('openapi', APPS, '--out', file, '--check')
  t.same([current.code, current.err, current.out], [0, '', ''], 'current: nothing printed')
  writeFileSync(file, readFileSync(file, 'utf8').replace('"Ping"', '"Pong"'))
  const stale = await run('openapi', APPS, '--out', file, '--check')
  t.equal(stale.code, 1)
  t.equal(stale.err, `${file} is not the document of ${APPS}: write it with fastify-views openapi ${APPS} --out ${file}\n`)
  t.match(readFileSync(file, 'utf8'), '"Pong"', '--check writes nothing')
})

test('an export that is an application instance is made ready and documented', async (t) => {
  const { code, out } = await run('openapi', `${APPS}:instance`)
  t.equal(code, 0)
  t.equal(JSON.parse(out).info.title, 'Instance')
})

test('mistakes exit 2 with a message naming them, and the usage when the command line is wrong', async (t) => {
  const cases: Array<[string[], RegExp, boolean]> = [
    [[], /^fastify-views: no command given\n/, true],
    [['docs'], /^fastify-views: unknown command docs\n/, true],
    [['openapi'], /^fastify-views: openapi takes one module, not 0\n/, true],
    [['openapi', APPS, 'other.js'], /^fastify-views: openapi takes one module, not 2\n/, true],
    [['openapi', APPS, '--check'], /^fastify-views: --check compares the document with the file --out names: give --out\n/, true],
    [['openapi', APPS, '--yaml'], /^fastify-views: Unknown option '--yaml'/, true],
    [['openapi', `${APPS}:missing`], new RegExp(`^fastify-views: ${APPS} has no export named missing; its exports: default, instance, notAnApp, undocumented\\. Name one: ${APPS}:<export>\\n`), true],
    [['openapi', `${APPS}:notAnApp`],
      /^fastify-views: test\/fixtures\/cli\/apps\.ts:notAnApp is not a Fastify application with @fastify\/swagger registered, nor a/, true],
    [['openapi', `${APPS}:undocumented`], /is not a Fastify application with @fastify\/swagger registered/, true],
    [['openapi', 'test/fixtures/cli/empty.ts'],
      /^fastify-views: test\/fixtures\/cli\/empty\.ts has no export default; its exports: none\. Name one: test\/fixtures\/cli\/empty\.ts:<export>\n/, true],
    [['openapi', 'test/fixtures/cli/nowhere.js'], /^fastify-views: Cannot find module .*nowhere\.js/, false],
    [['openapi', 'test/fixtures/cli/throws.ts'], /^fastify-views: the module threw a string\n$/, false]
  ]
  for (const [argv, message, usage] of cases) {
    const { code, out, err } = await run(...argv)
    t.equal(code, 2, argv.join(' '))
    t.equal(out, '')
    t.match(err, message)
    t.equal(err.includes(USAGE), usage, usage ? 'with the usage' : 'without the usage: the command line was right')
  }
})

test('bin/fastify-views.js, as npx runs it: the document on standard output, and the exit code of --check', async (t) => {
  t.setTimeout(120_000)
  type Ran = Promise<{ code: number | null, out: string, err: string }>
  const spawnBin = (...argv: string[]): Ran => new Promise((resolve) => {
    // tap's TypeScript loader, so that the command loads a TypeScript module as it would the compiled one; not its
    // process-info hook, which costs the child seconds at exit (the coverage comes from the tests above).
    const loader = process.execArgv.filter((arg) => arg.includes('@tapjs/typescript') || arg.startsWith('--conditions'))
    // Nor the hooks tap passes in the environment (NODE_OPTIONS), which do the same; its loader only transpiles.
    const env = { PATH: process.env.PATH, TS_NODE_TRANSPILE_ONLY: '1' }
    const child = spawn(process.execPath, [...loader, 'bin/fastify-views.js', ...argv], {
      env, stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
    child.on('close', (code) => { resolve({ code, out, err }) })
  })
  const written = await spawnBin('openapi', APPS)
  t.equal(written.code, 0, written.err)
  t.equal(JSON.parse(written.out).info.title, 'Ping')
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-cli-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const stale = await spawnBin('openapi', APPS, '--out', path.join(dir, 'openapi.json'), '--check')
  t.equal(stale.code, 1, 'a drift check fails the CI step')
  t.match(stale.err, /does not exist: write it with fastify-views openapi/)
})
