#!/usr/bin/env node
// The `fastify-views` command: see lib/cli.ts, and `fastify-views` alone for its usage.
import { main } from '../dist/cli.js'

const code = await main(process.argv.slice(2), {
  out: (text) => { process.stdout.write(text) },
  err: (text) => { process.stderr.write(text) }
})
// An application may leave handles open after its close (a pool's timers): the command ends here.
process.exit(code)
