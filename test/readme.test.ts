import { test } from 'tap'
import { readFile } from 'node:fs/promises'

// The README's quick start must keep matching the package: its commands exist and its
// TypeScript block compiles (the block is also type-checked by the suite, see below).
test('README quick start names the scripts the package has', async (t) => {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8')
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'))
  for (const command of ['npm install', 'npm start', 'npm test', 'npm run bench', 'npm run mutation']) t.match(readme, command)
  for (const script of ['start', 'test', 'bench', 'mutation']) t.ok(pkg.scripts[script], `script ${script}`)
  t.notMatch(pkg.scripts.test, /mutation/, 'a mutation run is not part of npm test')
  t.ok(pkg.exports['./swagger'], 'fastify-views/swagger is exported')
})

test('the README code is examples/quickstart.ts, which the type-check compiles', async (t) => {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8')
  const source = await readFile(new URL('../examples/quickstart.ts', import.meta.url), 'utf8')
  const code = source.split('\n').slice(2).join('\n')
  t.ok(readme.includes('```ts\n' + code + '```'), 'README shows the quick start verbatim')
})
