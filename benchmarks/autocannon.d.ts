// Minimal typings for the part of autocannon's programmatic API the benchmark uses
// (the package ships no declarations and @types/autocannon is not a dependency).
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string
      connections?: number
      pipelining?: number
      /** Seconds. */
      duration?: number
      method?: string
      headers?: Record<string, string>
      body?: string | Buffer
      /** Seconds before a request times out. */
      timeout?: number
    }

    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      total: number
      p50: number
      p90: number
      p99: number
    }

    interface Result {
      /** Seconds, from the first request to the end of the run. */
      duration: number
      errors: number
      timeouts: number
      non2xx: number
      resets: number
      /** `total` is the number of completed requests; `sent` the number sent. */
      requests: Histogram & { sent: number }
      latency: Histogram
      throughput: Histogram
      statusCodeStats: Record<string, { count: number }>
    }

    type Callback = (error: Error | null, result: Result) => void
  }

  function autocannon (options: autocannon.Options, callback: autocannon.Callback): unknown

  export = autocannon
}
