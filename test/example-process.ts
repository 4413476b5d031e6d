import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/**
 * Example servers as deployed: processes of `examples/server.ts` (what `npm start` runs) on
 * ports the system picks. The children run the TypeScript source through the loader tap runs
 * the test with (`process.execArgv`), so no build step is needed and none can be stale.
 */
const root = fileURLToPath(new URL('..', import.meta.url))

export interface ExampleProcess { name: string, url: string, child: ChildProcess, output: () => string }

/** Every child started and not yet stopped, so that a test's teardown can stop them all, failed starts included. */
const running = new Set<ChildProcess>()

/** Stops every example server this process started. */
export async function stopExamples (): Promise<void> {
  await Promise.all([...running].map((child) => stopExample(child)))
}

/** SIGTERM (the server closes the app and its store), SIGKILL if it has not exited within 10 s. */
export async function stopExample (child: ChildProcess): Promise<void> {
  running.delete(child)
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

/**
 * Starts one example server with `env` added to the test's environment (`PORT=0`, so the system
 * picks the port) and reads its address from the line it prints (`listening on http://...`, the
 * bound port) or Fastify's `Server listening at` log line.
 */
export async function startExample (name: string, env: Record<string, string>): Promise<ExampleProcess> {
  const child = spawn(process.execPath, [...process.execArgv, 'examples/server.ts'], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  running.add(child)
  let output = ''
  const read = (chunk: Buffer): void => { output += chunk.toString() }
  child.stdout.on('data', read)
  child.stderr.on('data', read)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${name}: no address within 60 s:\n${output}`)) }, 60_000)
    const look = (): void => {
      for (const match of output.matchAll(/listening (?:at|on) (http:\/\/127\.0\.0\.1:(\d+))/g)) {
        if (match[2] !== '0') { clearTimeout(timer); child.off('exit', exited); resolve(match[1]); return }
      }
    }
    const exited = (code: number | null, signal: string | null): void => { clearTimeout(timer); reject(new Error(`${name} exited (${code ?? signal}):\n${output}`)) }
    child.stdout.on('data', look)
    child.stderr.on('data', look)
    child.once('exit', exited)
  })
  return { name, url, child, output: () => output }
}
