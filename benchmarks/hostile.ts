/**
 * What each hostile patch of `test/patch-attacks.ts` costs the example server as users start it
 * (the compiled `examples/server.js`, Node's default heap, SQLite in memory): one fresh server per
 * attack, the attack sent twice at once over HTTP, the time until both are answered (or the server
 * dies, or 60 s pass) and the server's peak resident memory (Linux `VmHWM`).
 * `npx tsc -p tsconfig.json && node --conditions=fastify-views-build build/benchmarks/hostile.js [path to another server.js]`:
 * the argument measures another build of the example the same way (an earlier commit's, say).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { PATCH_ATTACKS } from '../test/patch-attacks.js'

const server = process.argv[2] ?? fileURLToPath(new URL('../examples/server.js', import.meta.url))
const LIMIT_MS = 60_000

async function start (): Promise<{ child: ChildProcess, base: string }> {
  // The conditions this script runs with (`--conditions=fastify-views-build`) resolve the example's `fastify-views`.
  const child = spawn(process.execPath, [...process.execArgv, server], { env: { ...process.env, PORT: '0', DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'fatal' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const read = (chunk: Buffer): void => { output += chunk.toString() }
  child.stdout?.on('data', read)
  child.stderr?.on('data', read)
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /listening on (http:\S+)/.exec(output)
      if (match !== null) { clearInterval(timer); resolve(match[1]) }
    }, 20)
    child.once('exit', () => { clearInterval(timer); reject(new Error(`the server exited:\n${output}`)) })
  })
  return { child, base }
}

/** The peak resident memory of a process, in MiB. */
function peakMiB (pid: number | undefined): string {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid ?? 0}/status`, 'utf8'))
  return match === null ? '?' : String(Math.round(Number(match[1]) / 1024))
}

console.log('| attack | body | answers | time | peak memory (idle -> after) |\n|---|---:|---|---:|---|')
for (const attack of PATCH_ATTACKS) {
  const { child, base } = await start()
  await fetch(`${base}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"lamp","price":1}' })
  const idle = peakMiB(child.pid)
  const body = attack.body()
  const started = performance.now()
  const died = new Promise<string>((resolve) => child.once('exit', (code, signal) => { resolve(`the server died (${signal ?? code ?? '?'})`) }))
  const timer = new Promise<string>((resolve) => setTimeout(() => { resolve(`no answer in ${LIMIT_MS / 1000} s`) }, LIMIT_MS).unref())
  const sent = Promise.all([0, 1].map(async () => (await fetch(`${base}/items/1`, { method: 'PATCH', headers: { 'content-type': attack.type }, body })).status))
    .then((statuses) => statuses.join(' and '), () => 'the connection was lost')
  const outcome = await Promise.race([sent, died, timer])
  const took = Math.round(performance.now() - started)
  const peak = child.exitCode === null && child.signalCode === null ? peakMiB(child.pid) : 'gone'
  console.log(`| ${attack.name} | ${Math.ceil(body.length / 1024)} KiB | ${outcome} | ${took} ms | ${idle} -> ${peak} MiB |`)
  child.kill('SIGKILL')
}
