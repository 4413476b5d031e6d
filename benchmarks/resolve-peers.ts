/**
 * Where the compiled benchmarks find their peers. `npm run bench` installs what the
 * benchmarks compare against (NestJS, fastify-decorators, @fastify/etag) and drive the load
 * with (autocannon) into benchmarks/node_modules, a package of its own, so that the root's
 * `npm install` stays light. The benchmarks run compiled, from build/benchmarks/, which is
 * not under benchmarks/: Node looks a bare import up in the node_modules folders of the
 * importing file's directory and its parents, so it would never reach benchmarks/node_modules
 * (and NODE_PATH does not apply to `import`).
 *
 * So this module, loaded first with `--import` (by the `bench` script, and by run.ts into
 * the server it forks), adds one rule: a bare import from a file of build/benchmarks/ that
 * the root cannot resolve is resolved from benchmarks/ instead. The root is still asked
 * first, so fastify, TypeBox and the library stay the root's, the ones the tests run with.
 * The peers' own imports resolve from where they are installed, by Node's usual lookup.
 * (`tsc` needs nothing of the kind: it resolves from the source files, which are under
 * benchmarks/.)
 */
import module from 'node:module'

/** The directory of the compiled benchmarks (this file's), as a URL prefix. */
const compiled = new URL('./', import.meta.url).href
/** The benchmarks' package.json, as the importer to resolve a peer from. */
const peers = new URL('../../benchmarks/package.json', import.meta.url).href

/** `autocannon`, `@nestjs/core/…`: not relative, absolute, a URL or a package import (`#…`). */
const bare = (specifier: string): boolean => !/^[./#]/.test(specifier) && !/^[a-z][a-z\d+.-]*:/i.test(specifier)
const notFound = (error: unknown): boolean =>
  (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' || (error as { code?: unknown }).code === 'MODULE_NOT_FOUND'

// Synchronous, in-thread hooks: Node 22.15 and later (module.register, the older off-thread
// API, is deprecated from Node 26 on).
if (typeof module.registerHooks !== 'function') {
  throw new Error(`npm run bench needs Node 22.15 or later (module.registerHooks), not ${process.version}`)
}
module.registerHooks({
  resolve (specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context)
    } catch (error) {
      if (!bare(specifier) || !notFound(error) || context.parentURL?.startsWith(compiled) !== true) throw error
      return nextResolve(specifier, { ...context, parentURL: peers })
    }
  }
})
