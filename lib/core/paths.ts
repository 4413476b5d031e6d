/** Joins a prefix and a route path: `('/items', '/')` -> `/items`, `('', '/')` -> `/`. */
export function joinPath (prefix: string, path: string): string {
  const head = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix
  if (path === '' || path === '/') return head === '' ? '/' : head
  return head + (path.startsWith('/') ? path : '/' + path)
}
