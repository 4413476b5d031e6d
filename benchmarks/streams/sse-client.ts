/**
 * Event-stream clients of the streams benchmark, forked by `run.js`: `count` raw TCP connections to
 * `GET <path>` on 127.0.0.1:<port>, each request written by hand (lighter than an http.Agent), kept
 * open. For each tick the runner announces, every connection notes when the event reached it
 * (`now()`, the clock the server stamped the event with) and the runner gets the delays.
 *
 *   node build/benchmarks/streams/sse-client.js <port> <path> <count> <concurrency>
 */
import net from 'node:net'
import { now } from './common.js'

if (process.send === undefined) {
  console.error('benchmarks/streams/sse-client.js is started by benchmarks/streams/run.js (child_process.fork)')
  process.exit(1)
}

export type ToClient = { type: 'connect' } | { type: 'expect', seq: number } | { type: 'close' }
export type FromClient =
  | { type: 'connected', opened: number, failed: number, ms: number }
  | { type: 'expecting', seq: number }
  | { type: 'arrivals', seq: number, delaysNs: number[], missing: number, closed: number }

const send = (message: FromClient): void => { process.send!(message) }
const [port, path] = [Number(process.argv[2]), process.argv[3]]
const [count, concurrency] = [Number(process.argv[4]), Number(process.argv[5])]
const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\nConnection: keep-alive\r\n\r\n`
/** `"seq":<n>,"t":<ns>` of a tick's data, wherever the reads split the body. */
const TICK = /"seq":(\d+),"t":(\d+)/g

const sockets: net.Socket[] = []
let closed = 0
/** The tick expected now, and the delay of each connection that has it. */
let expected = -1
let delays: number[] = []
let deadline: NodeJS.Timeout | undefined

function arrived (seq: number, t: number, at: number): void {
  if (seq !== expected) return
  delays.push(at - t)
  if (delays.length === sockets.length - closed) report()
}

function report (): void {
  clearTimeout(deadline)
  send({ type: 'arrivals', seq: expected, delaysNs: delays, missing: sockets.length - closed - delays.length, closed })
  expected = -1
  delays = []
}

/** One connection: resolves once its answer's headers came (200), rejects otherwise. */
function open (): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', noDelay: true })
    let head = true
    let text = ''
    socket.on('data', (chunk: Buffer) => {
      const at = now()
      text += chunk.toString('latin1')
      if (head) {
        const end = text.indexOf('\r\n\r\n')
        if (end === -1) return
        if (!text.startsWith('HTTP/1.1 200')) { reject(new Error(text.slice(0, 200))); socket.destroy(); return }
        head = false
        sockets.push(socket)
        resolve()
        text = text.slice(end + 4)
      }
      let last = 0
      for (const match of text.matchAll(TICK)) {
        arrived(Number(match[1]), Number(match[2]), at)
        last = match.index + match[0].length
      }
      // What may be the start of a tick split across reads stays; the rest (heartbeats, framing) goes.
      text = last > 0 ? text.slice(last) : text.slice(-64)
    })
    socket.on('error', (error) => { reject(error) })
    socket.on('close', () => { if (!head) closed++ })
    socket.write(request)
  })
}

async function connectAll (): Promise<void> {
  const started = now()
  let next = 0
  let failed = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++
      await open().catch((error: unknown) => {
        failed++
        if (failed <= 3) console.error(`sse-client: a connection failed: ${String(error)}`)
      })
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  send({ type: 'connected', opened: sockets.length, failed, ms: (now() - started) / 1e6 })
}

process.on('message', (message: ToClient) => {
  if (message.type === 'connect') {
    connectAll().catch((error: unknown) => { throw error })
  } else if (message.type === 'expect') {
    expected = message.seq
    delays = []
    deadline = setTimeout(report, 20_000)
    send({ type: 'expecting', seq: expected })
  } else {
    for (const socket of sockets) socket.destroy()
    setTimeout(() => process.exit(0), 200)
  }
})
