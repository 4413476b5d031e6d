import type { FastifyDynamicSwaggerOptions, SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger'
import { documentedSchema } from './openapi.js'
import { problemComponents } from './problem-schema.js'
import { ALWAYS_SENT } from './response-headers.js'

export { documentedSchema }

/** How `@fastify/swagger` names the schema components it hoists. */
export interface RefResolver {
  buildLocalReference: (json: { $id?: unknown }, baseUri: unknown, fragment: unknown, i: number) => string
}

/** Names every hoisted component after its `$id` (`Item`, `ItemPage`) instead of `def-0`. */
export const refResolver: RefResolver = {
  buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
}

type OpenAPIObject = { components?: { schemas?: Record<string, unknown> } }

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

type HeaderObject = { required?: boolean, schema?: Record<string, unknown> }
// What @fastify/swagger generates, before a transformObject of the user's: every path has operations, every operation responses.
type GeneratedPaths = Record<string, Record<string, { responses: Record<string, { headers?: Record<string, HeaderObject> }> }>>

/** Headers marked `alwaysSent` become `required: true`; the marker leaves the schema. */
export function markRequiredHeaders (paths: GeneratedPaths): void {
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses)) {
        for (const header of Object.values(response.headers ?? {})) {
          if (header.schema?.[ALWAYS_SENT] !== true) continue
          delete header.schema[ALWAYS_SENT]
          header.required = true
        }
      }
    }
  }
}

/** What `swaggerOptions` returns: options for `app.register(swagger, ...)`. */
export type ViewsSwaggerOptions = FastifyDynamicSwaggerOptions & {
  openapi: NonNullable<FastifyDynamicSwaggerOptions['openapi']>
  refResolver: RefResolver
  transform: SwaggerTransform
  transformObject: SwaggerTransformObject
}

/**
 * Options for `@fastify/swagger` that document view routes as intended: OpenAPI 3.1
 * (JSON Schema 2020-12: `const`, `anyOf` with `null`), components named after their
 * `$id`, the problem components error responses reference, and what `responses` entries
 * document beyond what is served (`documentedSchema`: an explicit success body, statuses
 * only an entry documents). Extra options pass through; a `transform` or
 * `transformObject` of yours runs after ours.
 *
 * ```ts
 * import { swaggerOptions } from 'fastify-views/swagger'
 * await app.register(swagger, swaggerOptions({ info: { title: 'Shop', version: '1.0.0' } }))
 * ```
 */
export function swaggerOptions (document: NonNullable<FastifyDynamicSwaggerOptions['openapi']>, options: Omit<FastifyDynamicSwaggerOptions, 'openapi'> = {}): ViewsSwaggerOptions {
  const theirTransform = options.transform
  const transform: SwaggerTransform = (input) => {
    const schema = documentedSchema(input.schema)
    if (theirTransform === undefined) return { schema, url: input.url }
    return theirTransform(schema === input.schema ? input : { ...input, schema })
  }
  const theirs = options.transformObject
  const transformObject: SwaggerTransformObject = (input) => {
    if (!('openapiObject' in input)) return theirs === undefined ? input.swaggerObject : theirs(input)
    const openapiObject = addProblemComponents(input.openapiObject as OpenAPIObject) as typeof input.openapiObject
    markRequiredHeaders(openapiObject.paths as GeneratedPaths) // the generator's own output: its type allows the absent parts it never leaves out
    return theirs === undefined ? openapiObject : theirs({ openapiObject })
  }
  return { ...options, openapi: { openapi: '3.1.0', ...document }, refResolver, transform, transformObject }
}
