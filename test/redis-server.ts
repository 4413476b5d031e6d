import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'

/** A throwaway Redis server for the suite: its own directory, a free loopback port, nothing saved to disk. */
export interface RedisServer {
  port: number
  start: () => Promise<void>
  stop: () => Promise<void>
  kill: () => Promise<void>
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

/** Resolves once the server accepts connections on `port`. */
async function ready (child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let output = ''
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      if (output.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData)
        resolve()
      }
    }
    child.stdout?.on('data', onData)
    child.once('exit', (code) => reject(new Error(`redis-server exited (${String(code)}): ${output}`)))
  })
}

/** Starts a server; `kill` ends it abruptly (SIGKILL), as a crash would, and `start` brings it back on the same port. */
export async function startRedis (): Promise<RedisServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-redis-'))
  const port = await freePort()
  let child: ChildProcess | undefined
  const start = async (): Promise<void> => {
    child = spawn('redis-server', [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'no'
    ], { stdio: ['ignore', 'pipe', 'inherit'] })
    await ready(child)
  }
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child
    child = undefined
    if (running === undefined || running.exitCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill(signal)
    await exited
  }
  await start()
  return {
    port,
    start,
    stop: async () => { try { await end('SIGTERM') } finally { rmSync(dir, { recursive: true, force: true }) } },
    kill: async () => end('SIGKILL')
  }
}
