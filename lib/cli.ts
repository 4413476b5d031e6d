// The `fastify-views` command (an entry point, run by bin/fastify-views.js): `openapi` writes the OpenAPI
// document of an application loaded without listening, or checks that a file holds it (docs/openapi.md).
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

export const USAGE = `Usage: fastify-views openapi <module>[:export] [--out <file>] [--check]

  <module>   a JavaScript module exporting a Fastify application that registered @fastify/swagger,
             or a function (async or not) that builds one; it is made ready, never listens, and is closed
  :export    the export to load (default: the module's default export)
  --out      write the document to this file: YAML for .yaml and .yml, JSON otherwise (default: standard output, JSON)
  --check    write nothing; exit 1 when the file --out names is not the document (a drift check for CI)`

/** Where the command writes: standard output and standard error, or a test's. */
export interface Output { out: (text: string) => void, err: (text: string) => void }

/** What the command needs of the application: @fastify/swagger's `swagger()`. */
interface Documented {
  ready: () => PromiseLike<unknown>
  swagger: (options?: { yaml?: boolean }) => unknown
  close: () => PromiseLike<unknown>
}

/** A mistake of the command line or of the module it names: the message says which, and the command exits 2. */
class UsageError extends Error {}

const isDocumented = (value: unknown): value is Documented => typeof value === 'object' && value !== null &&
  typeof Reflect.get(value, 'swagger') === 'function' && typeof Reflect.get(value, 'ready') === 'function' &&
  typeof Reflect.get(value, 'close') === 'function'

/** `dist/app.js:buildApp` -> the file and the export; a colon followed by a path (a Windows drive) is the file's. */
function splitSpec (spec: string): { file: string, name: string | undefined } {
  const at = spec.lastIndexOf(':')
  const name = spec.slice(at + 1)
  if (at <= 1 || !/^[A-Za-z_$][\w$]*$/.test(name)) return { file: spec, name: undefined }
  return { file: spec.slice(0, at), name }
}

/** The application the module exports, made ready: the export itself, or what the function it is builds. */
async function loadApp (spec: string): Promise<Documented> {
  const { file, name } = splitSpec(spec)
  const module: Record<string, unknown> = await import(pathToFileURL(path.resolve(file)).href)
  const key = name ?? 'default'
  if (!(key in module)) {
    throw new UsageError(`${file} has no export ${name === undefined ? 'default' : `named ${name}`}; its exports: ` +
      `${Object.keys(module).join(', ') || 'none'}. Name one: ${file}:<export>`)
  }
  const exported = module[key]
  const value: unknown = typeof exported === 'function' ? await (exported as () => unknown)() : exported
  if (!isDocumented(value)) {
    throw new UsageError(`${spec} is not a Fastify application with @fastify/swagger registered, nor a function that builds one`)
  }
  await value.ready()
  return value
}

/** The document as text: YAML for a .yaml or .yml file, else JSON indented by two spaces, with a final newline. */
function documentText (app: Documented, out: string | undefined): string {
  if (out !== undefined && /\.ya?ml$/i.test(out)) return String(app.swagger({ yaml: true }))
  return JSON.stringify(app.swagger(), null, 2) + '\n'
}

async function openapi (args: string[], output: Output): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { out: { type: 'string' }, check: { type: 'boolean' } }, allowPositionals: true })
  if (positionals.length !== 1) throw new UsageError(`openapi takes one module, not ${positionals.length}`)
  const { out, check = false } = values
  if (check && out === undefined) throw new UsageError('--check compares the document with the file --out names: give --out')
  const app = await loadApp(positionals[0])
  let text: string
  try {
    text = documentText(app, out)
  } finally {
    await app.close()
  }
  if (out === undefined) {
    output.out(text)
    return 0
  }
  if (!check) {
    await writeFile(out, text)
    return 0
  }
  const written = await readFile(out, 'utf8').catch(() => undefined)
  if (written === text) return 0
  output.err(`${out} ${written === undefined ? 'does not exist' : 'is not the document of ' + positionals[0]}: ` +
    `write it with fastify-views openapi ${positionals[0]} --out ${out}\n`)
  return 1
}

/** Runs the command; resolves to its exit code (0, 1 for a document that differs, 2 for a mistake). */
export async function main (argv: readonly string[], output: Output): Promise<number> {
  const [command, ...args] = argv
  try {
    if (command === 'openapi') return await openapi(args, output)
    throw new UsageError(command === undefined ? 'no command given' : `unknown command ${command}`)
  } catch (error) {
    // Node's own argument errors (an unknown option) are mistakes of the command line too.
    const usage = error instanceof UsageError || (error instanceof TypeError && String(Reflect.get(error, 'code')).startsWith('ERR_PARSE_ARGS'))
    output.err(`fastify-views: ${error instanceof Error ? error.message : String(error)}\n${usage ? `\n${USAGE}\n` : ''}`)
    return 2
  }
}
