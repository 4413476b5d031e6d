import { problemComponents } from './problem-schema.js'

/** How `@fastify/swagger` names the schema components it hoists. */
export interface RefResolver {
  buildLocalReference: (json: { $id?: unknown }, baseUri: unknown, fragment: unknown, i: number) => string
}

/** Names every hoisted component after its `$id` (`Item`, `ItemPage`) instead of `def-0`. */
export const refResolver: RefResolver = {
  buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
}

type OpenAPIObject = { components?: { schemas?: Record<string, unknown> }, [key: string]: unknown }
type TransformObject = (input: { openapiObject: OpenAPIObject }) => OpenAPIObject

const REF = /"#\/components\/schemas\/([^"]+)"/g

/**
 * Adds the problem components (`Problem`, `NotFoundProblem`, ...) that the document
 * references: error bodies are documented as references, since the generator does
 * not hoist schemas out of a response's `content`.
 */
export function addProblemComponents (document: OpenAPIObject): OpenAPIObject {
  const components = document.components ?? (document.components = {})
  const schemas = components.schemas ?? (components.schemas = {})
  let pending = JSON.stringify(document)
  for (;;) {
    const added: unknown[] = []
    for (const [, name] of pending.matchAll(REF)) {
      const component = problemComponents.get(name)
      if (component !== undefined && schemas[name] === undefined) {
        schemas[name] = component
        added.push(component)
      }
    }
    if (added.length === 0) return document
    pending = JSON.stringify(added)
  }
}

/**
 * Options for `@fastify/swagger` that document view routes as intended: OpenAPI 3.1
 * (JSON Schema 2020-12: `const`, `anyOf` with `null`), components named after their
 * `$id`, and the problem components error responses reference. Extra options pass
 * through; a `transformObject` of yours runs after ours.
 *
 * ```ts
 * await app.register(swagger, swaggerOptions({ info: { title: 'Shop', version: '1.0.0' } }))
 * ```
 */
export function swaggerOptions<D extends { info: { title: string, version: string } }, O extends { transformObject?: TransformObject } = {}> (document: D, options?: O): { openapi: D & { openapi: '3.1.0' }, refResolver: RefResolver, transformObject: TransformObject } & Omit<O, 'transformObject'> {
  const theirs = options?.transformObject
  const transformObject: TransformObject = ({ openapiObject }) => {
    const withProblems = addProblemComponents(openapiObject)
    return theirs === undefined ? withProblems : theirs({ openapiObject: withProblems })
  }
  return { ...options, openapi: { openapi: '3.1.0', ...document }, refResolver, transformObject } as never
}
