/** What the runner reads around a measured run: autocannon, CPU time, the machine's busy time. */
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import type { ServerMessage } from './protocol.js'

export type CpuAnswer = Extract<ServerMessage, { type: 'cpu' }>

/** The server process as the measuring code needs it. */
export interface Server {
  readonly port: number
  /** The server's CPU time so far and its heap; with `gc`, after a full garbage collection. */
  cpu (gc: boolean): Promise<CpuAnswer>
}

export function cannon (options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => error === null || error === undefined ? resolve(result) : reject(error))
  })
}

export function cpuMicros (before: NodeJS.CpuUsage, after: NodeJS.CpuUsage): number {
  return (after.user - before.user) + (after.system - before.system)
}

/** Linux clock ticks per second of /proc/stat (USER_HZ, 100 on every mainstream kernel). */
const USER_HZ = 100

/**
 * CPU time every process of the machine used so far (busy = all but idle and iowait),
 * µs, from /proc/stat; `undefined` where there is no /proc/stat. What is neither the
 * server's nor autocannon's is other load on the machine, which skews a run.
 */
export function machineBusyMicros (): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number)
    return (user + nice + system + irq + softirq + steal) * (1e6 / USER_HZ)
  } catch {
    return undefined
  }
}
