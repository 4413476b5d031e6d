/**
 * Instructions per request, counted by Valgrind's callgrind: where the load runs cannot tell
 * two routes apart (a few percent, on a machine whose CPU time per request moves by more
 * than that from one second to the next), the number of instructions the server process
 * executes for one request of each, which does not depend on the machine's speed.
 *
 *   node --conditions=fastify-views-build --import ./build/benchmarks/resolve-peers.js \
 *     build/benchmarks/instructions.js <scenario> <variant> <variant>...
 *   (npm run bench:instructions -- <scenario> <variant> <variant>...)
 *
 * `baseline` names the scenario's hand-written route. One process serves the scenario and
 * sends the requests (`instructions-child.ts`); after a warm-up of every variant, blocks of
 * requests of each variant alternate, in an order rotated every block, and the counter is
 * zeroed before a block and read after it. Every ratio is against the first variant named.
 *
 *   INSTR_REQUESTS  requests per block (default 1000)
 *   INSTR_BLOCKS    blocks per variant (default 10)
 *   INSTR_WARMUP    unmeasured requests per variant first (default 8000)
 *   INSTR_VERBOSE=1 also prints every block's count
 *
 * What it counts and what it does not: user-space instructions of the process, the client's
 * included (the same request bytes for every variant, a response read by its length), the
 * JIT's and the garbage collector's included; not the kernel's work (socket writes), not a
 * database server's, not cache misses or branch mispredictions. It runs about fifty times
 * slower than natively; needs `valgrind` on the PATH (Debian's package).
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import { integer, max, mean, meanSe, median, min, signed, table } from './stats.js'
import { roundOrder } from './order.js'

const here = dirname(fileURLToPath(import.meta.url))

function setting (name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`)
  return value
}

const [scenario, ...variants] = process.argv.slice(2)
if (scenario === undefined || variants.length === 0) {
  console.error('usage: node build/benchmarks/instructions.js <scenario> <variant> [<variant>...]  (baseline: the hand-written route)')
  process.exit(2)
}
try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
} catch {
  console.error('valgrind is not on the PATH: install it (Debian: apt-get install valgrind)')
  process.exit(2)
}
const requests = setting('INSTR_REQUESTS', 1000)
const blocks = setting('INSTR_BLOCKS', 10)
const warmup = setting('INSTR_WARMUP', 8000)

const dumps = mkdtempSync(join(tmpdir(), 'fastify-views-callgrind-'))
process.once('exit', () => rmSync(dumps, { recursive: true, force: true }))
const child = spawn('valgrind', [
  '--tool=callgrind', '-q', `--callgrind-out-file=${join(dumps, 'out.%p')}`,
  // V8 writes the code it runs: every translation is checked against the bytes it came from.
  '--smc-check=all-non-file',
  // No compiler or collector threads: each tier of a function is compiled when it is due, not whenever
  // a background thread gets to it (late and at random under Valgrind, which runs one thread at a time).
  process.execPath, ...process.execArgv, '--single-threaded', '--no-memory-reducer', join(here, 'instructions-child.js'), scenario, ...variants
], { stdio: ['pipe', 'pipe', 'inherit'] })
const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]()

async function answer (): Promise<string> {
  const next = await lines.next()
  if (next.done === true) throw new Error('the measured process exited early (its error is above)')
  return next.value
}

function control (flag: string): void {
  execFileSync('callgrind_control', [flag, String(child.pid)], { stdio: 'ignore' })
}

let dumped = 0
/** Instructions executed since the counter was last zeroed, from callgrind's next dump. */
function count (): number {
  control('-d')
  dumped++
  const text = readFileSync(join(dumps, `out.${child.pid}.${dumped}`), 'utf8')
  const totals = /^totals: (\d+)/m.exec(text) ?? /^summary: (\d+)/m.exec(text)
  if (totals === null) throw new Error('no totals in a callgrind dump')
  return Number(totals[1])
}

async function block (variant: string, n: number): Promise<void> {
  child.stdin!.write(`run ${variant} ${n}\n`)
  if (await answer() !== 'done') throw new Error(`${variant}: no answer`)
}

if (await answer() !== 'ready') throw new Error('the measured process did not start')
console.log(`# instructions per request: ${scenario}, ${blocks} blocks of ${requests} requests per variant after ${warmup} each, under callgrind\n`)
for (const variant of variants) await block(variant, warmup)
const counts = new Map<string, number[]>(variants.map((v) => [v, []]))
for (let b = 0; b < blocks; b++) {
  for (const variant of roundOrder(variants, b)) {
    control('-z')
    await block(variant, requests)
    counts.get(variant)!.push(count() / requests)
  }
}
if (process.env.INSTR_VERBOSE === '1') for (const [v, c] of counts) console.log(v, c.map((x) => Math.round(x)).join(' '))
child.stdin!.end('quit\n')

const reference = counts.get(variants[0])!
const referenceMedian = median(reference)
const rows = variants.map((variant) => {
  const own = counts.get(variant)!
  // Paired by block: the reference's block of the same index ran next to this one. The median
  // leaves out the few blocks a major collection or a compilation fell into, which the mean keeps.
  const differences = own.map((x, i) => (x - reference[i]) / referenceMedian * 100)
  const first = variant === variants[0]
  return [
    variant,
    integer(median(own)),
    integer(mean(own)),
    `${integer(min(own))}–${integer(max(own))}`,
    first ? '' : integer(median(own) - referenceMedian),
    first ? '' : signed(median(differences)),
    first ? '' : meanSe(differences)
  ]
})
console.log(table(
  ['variant', 'median', 'mean', 'range of blocks', `median − ${variants[0]}`, 'paired, median %', 'paired, mean ± SE %'],
  rows,
  [false, true, true, true, true, true, true]
))
console.log(`\ninstructions per request; paired: a block minus the ${variants[0]} block of the same index, % of the ${variants[0]} median`)
