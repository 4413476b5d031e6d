// Writes the declarations CommonJS consumers compile against: dist/cjs/**/*.d.cts, a copy of
// dist/**/*.d.ts whose relative imports name .cjs files. A CommonJS project resolves the
// packages the declarations import under the `require` condition, so a type such as TypeBox's
// `TSchema` comes from the same declaration file the project's own schemas come from; through the
// ES module declarations it would come from TypeBox's other build, and the compiler would see two
// unrelated types. The JavaScript is the same for both: Node loads the ES module through
// `require()` (22.12 and later).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const dist = path.resolve(import.meta.dirname, '..', 'dist')
const out = path.join(dist, 'cjs')

/** A relative module specifier ending in .js, in quotes: `'./views/mixins.js'`. */
const RELATIVE_JS = /(['"])(\.{1,2}\/[^'"]*?)\.js\1/g

rmSync(out, { recursive: true, force: true })
let written = 0
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue
  const from = path.join(entry.parentPath, entry.name)
  if (from.startsWith(out + path.sep)) continue
  const to = path.join(out, path.relative(dist, from)).replace(/\.d\.ts$/, '.d.cts')
  const text = readFileSync(from, 'utf8')
    .replace(RELATIVE_JS, (_, quote, specifier) => `${quote}${specifier}.cjs${quote}`)
    .replace(/^\/\/# sourceMappingURL=.*$/m, '')
  mkdirSync(path.dirname(to), { recursive: true })
  writeFileSync(to, text)
  written++
}
console.log(`cjs-declarations: ${written} files in dist/cjs`)
