/**
 * The process `instructions.ts` runs under Valgrind's callgrind: one scenario's routes served on
 * a real socket, and a client in this same process that sends one variant's request at a time
 * on a keep-alive connection of its own, when the parent says so on stdin (`run <variant> <n>`,
 * answered `done`). The parent zeroes and reads the instruction counter around each block, so
 * what a block counts is the server's work for n requests plus this small client's.
 */
import net from 'node:net'
import readline from 'node:readline'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { configureApp } from '../lib/index.js'
import type { RequestSpec } from './protocol.js'
import { scenarios } from './scenarios/index.js'
import type { Scenario } from './scenarios/types.js'

/** A keep-alive connection that sends one request and waits for its whole response, again and again. */
class Connection {
  readonly #socket: net.Socket
  readonly #request: Buffer
  #received: Buffer = Buffer.alloc(0)
  #waiting: ((status: number) => void) | undefined
  #closed = false
  readonly #name: string

  constructor (socket: net.Socket, request: RequestSpec) {
    this.#socket = socket
    this.#name = `${request.method} ${request.path}`
    const headers: Record<string, string> = { host: '127.0.0.1', ...request.headers }
    if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body))
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
    this.#request = Buffer.from(`${request.method} ${request.path} HTTP/1.1\r\n${head}\r\n${request.body ?? ''}`)
    // A connection the server closes would leave its next block waiting forever: say so instead.
    socket.on('close', () => {
      this.#closed = true
      if (this.#waiting !== undefined) this.#lost()
    })
    socket.on('data', (chunk: Buffer) => {
      this.#received = this.#received.length === 0 ? chunk : Buffer.concat([this.#received, chunk])
      this.#complete()
    })
  }

  /** Hands a whole response to the waiting request: its head, then `content-length` bytes (none for a 304). */
  #complete (): void {
    const end = this.#received.indexOf('\r\n\r\n')
    if (end < 0 || this.#waiting === undefined) return
    const head = this.#received.subarray(0, end).toString('latin1')
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)
    const total = end + 4 + (length === null ? 0 : Number(length[1]))
    if (this.#received.length < total) return
    this.#received = this.#received.subarray(total)
    const done = this.#waiting
    this.#waiting = undefined
    done(Number(head.slice(9, 12)))
  }

  #lost (): never {
    console.error(`the server closed the connection of ${this.#name} between requests`)
    process.exit(1)
  }

  send (): Promise<number> {
    if (this.#closed) this.#lost()
    return new Promise((resolve) => {
      this.#waiting = resolve
      this.#socket.write(this.#request)
    })
  }
}

const [scenarioName, ...variantNames] = process.argv.slice(2)
const found = scenarios.find((s) => s.name === scenarioName)
if (found === undefined || found.kind === 'batch') throw new Error(`no load scenario named ${scenarioName}`)
const scenario: Scenario = found
// Each variant's connection waits idle while the others run, under Valgrind for longer than
// Fastify's keep-alive timeout (72 s): the server would close it.
const app = configureApp(Fastify({ logger: false, keepAliveTimeout: 24 * 3600_000 }))
await app.register(async (scope) => { await scenario.register(scope) })
await app.listen({ host: '127.0.0.1', port: 0 })
const { port } = app.server.address() as AddressInfo

const connections = new Map<string, { connection: Connection, expect: number | undefined }>()
for (const name of variantNames) {
  const variant = name === 'baseline' ? scenario.baseline : scenario.variants.find((v) => v.name === name)
  if (variant === undefined || variant.server !== undefined) throw new Error(`no variant ${name} served by the scenario's app in ${scenario.name}`)
  const socket = net.connect(port, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  connections.set(name, { connection: new Connection(socket, variant.request), expect: variant.request.expectStatus })
  // One request now, not counted: Node answers 408 and closes a connection that has sent no request
  // within headersTimeout (60 s), which the warm-ups of the variants before this one can outlast.
  await run(name, 1)
}

async function run (name: string, requests: number): Promise<void> {
  const { connection, expect } = connections.get(name)!
  for (let i = 0; i < requests; i++) {
    const status = await connection.send()
    if (expect === undefined ? status >= 300 : status !== expect) throw new Error(`${name} answered ${status}`)
  }
}

const lines = readline.createInterface({ input: process.stdin })
process.stdout.write('ready\n')
for await (const line of lines) {
  const [command, name, count] = line.split(' ')
  if (command !== 'run') break
  await run(name, Number(count))
  process.stdout.write('done\n')
}
await app.close()
process.exit(0)
