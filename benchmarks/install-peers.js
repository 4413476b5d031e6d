// `npm run bench`, first step: installs the benchmarks' own package (benchmarks/package.json:
// NestJS, fastify-decorators, @fastify/etag, @fastify/caching, autocannon) into benchmarks/node_modules, exactly
// as benchmarks/package-lock.json says (`npm ci --prefix benchmarks`), when it is missing or
// older than that package.json or lockfile; otherwise it does nothing. The root's `npm install`
// does not install them. Plain JavaScript: it runs before anything is compiled.
import { execFileSync } from 'node:child_process'
import { statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const modified = (file) => statSync(join(here, file), { throwIfNoEntry: false })?.mtimeMs ?? -1

// npm writes node_modules/.package-lock.json at the end of every install.
if (modified('node_modules/.package-lock.json') < Math.max(modified('package.json'), modified('package-lock.json'))) {
  console.error('npm run bench: installing the benchmarks\' peers into benchmarks/node_modules (npm ci --prefix benchmarks)')
  // --omit=peer: @types/node (fastify-decorators' peer) stays out; tsc takes Node's types from the
  // root, and two copies of them conflict once their versions differ.
  const args = ['ci', '--prefix', here, '--omit=peer', '--no-audit', '--no-fund', '--loglevel=error']
  // Under `npm run`, the npm that runs the script; `npm` from the PATH otherwise.
  const npm = process.env.npm_execpath
  if (npm !== undefined && npm.endsWith('.js')) {
    execFileSync(process.execPath, [npm, ...args], { stdio: 'inherit' })
  } else {
    execFileSync('npm', args, { stdio: 'inherit', shell: process.platform === 'win32' })
  }
}
