import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'

/** A throwaway PostgreSQL server for the suite: its own data directory, a free loopback port. */
export interface PgServer { url: string, stop: () => void, restart: () => void, kill: () => void, start: () => void }

function binDir (): string {
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim()
  if (found !== '') return path.dirname(found)
  const base = '/usr/lib/postgresql'
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : []
  if (versions.length === 0) throw new Error('PostgreSQL server binaries (initdb) not found: install Debian\'s postgresql package')
  return path.join(base, versions[0], 'bin')
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

/** Starts a server; as root it runs as the `postgres` user, since initdb refuses root. */
export async function startPostgres (): Promise<PgServer> {
  const bin = binDir()
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-pg-'))
  const asRoot = process.getuid?.() === 0
  const ids = asRoot ? { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) } : {}
  if (asRoot) chownSync(dir, ids.uid!, ids.gid!)
  const run = (cmd: string, args: string[]): void => {
    const result = spawnSync(path.join(bin, cmd), args, { ...ids, encoding: 'utf8', cwd: dir })
    if (result.status !== 0) throw new Error(`${cmd} failed: ${result.stderr || result.stdout}`)
  }
  const data = path.join(dir, 'data')
  run('initdb', ['-D', data, '-U', 'test', '--auth=trust', '-E', 'UTF8', '--no-sync'])
  const port = await freePort()
  const start = (): void => run('pg_ctl', ['-D', data, '-o', `-p ${port} -k ${dir} -h 127.0.0.1 -c fsync=off`, '-l', path.join(dir, 'log'), '-w', 'start'])
  const stop = (mode = 'fast'): void => run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop'])
  start()
  return {
    url: `postgres://test@127.0.0.1:${port}/postgres`,
    start,
    stop: () => { try { stop() } finally { rmSync(dir, { recursive: true, force: true }) } },
    restart: () => { stop(); start() },
    kill: () => stop('immediate')
  }
}

/** A PostgreSQL server for a test file, or why there is none: only missing server binaries skip its tests. */
export async function postgres (): Promise<{ server: PgServer } | { skip: string }> {
  try {
    return { server: await startPostgres() }
  } catch (error) {
    if (error instanceof Error && /binaries \(initdb\) not found/.test(error.message)) return { skip: `PostgreSQL is not installed here: ${error.message}` }
    throw error
  }
}

/**
 * A new database `name` on `server`, a pool of `max` connections over it (an idle client's error
 * ignored), and every statement text its connections run, in order: what a test counts the reads
 * of a request by.
 */
export async function freshDatabase (
  server: PgServer, name: string, max = 4
): Promise<{ pool: pg.Pool, statements: string[] }> {
  const admin = new pg.Pool({ connectionString: server.url, max: 1 })
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const pool = new pg.Pool({ connectionString: server.url.replace(/\/postgres$/, `/${name}`), max })
  pool.on('error', () => {})
  const statements: string[] = []
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    client.query = ((...args: unknown[]) => {
      statements.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown }).text))
      return query(...args)
    }) as never
  })
  return { pool, statements }
}
