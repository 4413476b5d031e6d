import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'

/**
 * A throwaway Redis server for the suite: its own directory, a free loopback port, nothing saved to
 * disk unless `durable` (an append-only file synced on every write, so that a server killed and
 * started again keeps its keys, as a Redis with persistence does); its process id, to hang it.
 */
export interface RedisServer {
  readonly port: number
  readonly url: string
  /** The process of the running server. */
  readonly pid: () => number
  start: () => Promise<void>
  /** Ends it abruptly (SIGKILL), as a crash would. */
  kill: () => Promise<void>
  /** Hangs it (SIGSTOP): connections stay open, nothing is answered. */
  pause: () => void
  /** Lets a hung server go on (SIGCONT). */
  resume: () => void
  stop: () => Promise<void>
}

/** Why Redis tests cannot run here, or `undefined` when `redis-server` is installed. */
export function redisMissing (): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim()
  return found === '' ? 'redis-server is not installed: install Debian\'s redis-server package (.ci/run does)' : undefined
}

async function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

async function ready (child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let output = ''
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      if (output.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData)
        child.stdout?.resume()
        resolve()
      }
    }
    child.stdout?.on('data', onData)
    child.once('exit', (code) => reject(new Error(`redis-server exited (${String(code)}): ${output}`)))
  })
}

const running = new Set<ChildProcess>()
// A test process that ends without its teardown leaves no server behind.
process.once('exit', () => { for (const child of running) child.kill('SIGKILL') })

export async function startRedis ({ durable = false }: { durable?: boolean } = {}): Promise<RedisServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-redis-'))
  const port = await freePort()
  let child: ChildProcess | undefined
  const persistence = durable ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']
  const start = async (): Promise<void> => {
    const started = spawn('redis-server', [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...persistence, '--protected-mode', 'no'
    ], { stdio: ['ignore', 'pipe', 'inherit'] })
    child = started
    running.add(started)
    started.once('exit', () => running.delete(started))
    await ready(started)
  }
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const current = child
    child = undefined
    if (current === undefined || current.exitCode !== null || current.signalCode !== null) return
    const exited = new Promise((resolve) => current.once('exit', resolve))
    current.kill('SIGCONT')
    current.kill(signal)
    await exited
  }
  const signal = (name: NodeJS.Signals) => () => {
    if (child?.pid === undefined) throw new Error('the Redis server is not running')
    process.kill(child.pid, name)
  }
  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: () => {
      if (child?.pid === undefined) throw new Error('the Redis server is not running')
      return child.pid
    },
    start,
    kill: async () => end('SIGKILL'),
    pause: signal('SIGSTOP'),
    resume: signal('SIGCONT'),
    stop: async () => { try { await end('SIGTERM') } finally { rmSync(dir, { recursive: true, force: true }) } }
  }
}
