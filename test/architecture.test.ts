import { test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'

/**
 * The layers of lib/, lowest first: a module imports only from its own layer or lower ones,
 * and no chain of imports (types included) comes back to where it started. docs/architecture.md
 * draws the same picture; this keeps the two honest.
 */
const LAYERS = ['core', 'http', 'schema', 'stores', 'query', 'access', 'routes', 'views', 'openapi', 'registration', 'telemetry', '.']

function modules (): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(file)
      else if (file.endsWith('.ts')) {
        const source = fs.readFileSync(file, 'utf8')
        graph.set(file, [...source.matchAll(/from '(\.[^']+)'/g)].map((m) => path.join(path.dirname(file), m[1]).replace(/\.js$/, '.ts')))
      }
    }
  }
  walk('lib')
  return graph
}

const layerOf = (file: string): number => {
  const top = path.relative('lib', file).split(path.sep)
  return LAYERS.indexOf(top.length === 1 ? '.' : top[0])
}

test('every module of lib/ belongs to a layer and imports only from its own or lower ones', async (t) => {
  const graph = modules()
  t.ok(graph.size > 40, 'the whole library is read')
  const upward: string[] = []
  for (const [file, deps] of graph) {
    t.not(layerOf(file), -1, `${file} is in a layer`)
    for (const dep of deps) {
      t.ok(graph.has(dep), `${file} imports ${dep}, which exists`)
      if (layerOf(dep) > layerOf(file)) upward.push(`${file} -> ${dep}`)
    }
  }
  t.same(upward, [], 'no import points up')
})

test('no import cycles, type imports included', async (t) => {
  const graph = modules()
  const cycles: string[] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (file: string): void => {
    state.set(file, 'open')
    stack.push(file)
    for (const dep of graph.get(file) ?? []) {
      if (state.get(dep) === 'open') cycles.push([...stack.slice(stack.indexOf(dep)), dep].join(' -> '))
      else if (!state.has(dep)) visit(dep)
    }
    stack.pop()
    state.set(file, 'done')
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file)
  t.same(cycles, [])
})

test('docs/architecture.md names every module of lib/ in the row of its folder, and no module that is gone', async (t) => {
  const doc = fs.readFileSync('docs/architecture.md', 'utf8')
  // The module table: | `folder/` | `module`, `module`, ... | what lives there |
  const rows = new Map<string, string[]>()
  for (const [, folder, names] of doc.matchAll(/^\| `([^`]*\/)` \| ([^|]*) \|/gm)) {
    rows.set(folder, [...names.matchAll(/`([^`]+)`/g)].map((m) => m[1]))
  }
  t.ok(rows.size > 10, 'the module table is read')
  const files = [...modules().keys()].map((file) => path.relative('lib', file).split(path.sep).join('/'))
  const folderOf = (file: string): string => file.includes('/') ? file.slice(0, file.lastIndexOf('/') + 1) : './'
  const unnamed = files.filter((file) => !(rows.get(folderOf(file)) ?? []).includes(path.basename(file, '.ts')))
  t.same(unnamed, [], 'every module is named in the row of its folder')
  const gone: string[] = []
  for (const [folder, names] of rows) {
    for (const name of names) {
      // A name ending in `/` is a subfolder, with a row of its own.
      const exists = name.endsWith('/') ? rows.has(folder + name) : files.includes((folder === './' ? '' : folder) + name + '.ts')
      if (!exists) gone.push(folder + name)
    }
  }
  t.same(gone, [], 'every module the table names exists')
})

/** Files of lib/ allowed past 400 lines, each with the reason it is one concept all the same: none today. */
const LONG_FILES: Record<string, string> = {}

test('a module of lib/ holds one concept: at most 400 lines, and it opens with a comment saying what it holds', async (t) => {
  const long: string[] = []
  const unexplained: string[] = []
  for (const file of modules().keys()) {
    const source = fs.readFileSync(file, 'utf8')
    const lines = source.split('\n').length
    const name = path.relative('lib', file).split(path.sep).join('/')
    if (lines > 400 && LONG_FILES[name] === undefined) long.push(`${name}: ${lines} lines`)
    if (!source.startsWith('//') && !source.startsWith('/**')) unexplained.push(name)
  }
  t.same(long, [], 'no module over 400 lines without a reason')
  t.same(unexplained, [], 'every module opens with a comment')
})

test('the generic core imports none of the optional features: conditional requests, patch documents, bulk views', async (t) => {
  const graph = modules()
  const core = [...graph.keys()].filter((file) => /views[/\\]generic[/\\]/.test(file))
  t.ok(core.length >= 4, 'the generic core is read')
  const optional = /views[/\\](conditional|patch|bulk)[/\\]/
  const leaks: string[] = []
  for (const file of core) {
    for (const dep of graph.get(file) ?? []) if (optional.test(dep)) leaks.push(`${file} -> ${dep}`)
  }
  t.same(leaks, [], 'views/generic/ imports nothing from views/conditional/, views/patch/ or views/bulk/')
})
