// swaggerOptions (openapi layer): the options of @fastify/swagger that document view routes as intended, and its transforms.
import type { FastifyDynamicSwaggerOptions, SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger'
import { DOCUMENTED_TAG, documentedSchema, OPTIONAL_BODY, SECURITY_SCHEMES } from './operation.js'
import { DocumentOrder, type DocumentTag } from './order.js'
import { ComponentCollector } from './components.js'
import { ALWAYS_SENT } from '../http/response-headers.js'

export { documentedSchema }

/** How `@fastify/swagger` names the schema components it hoists. */
export interface RefResolver {
  buildLocalReference: (json: { $id?: unknown }, baseUri: unknown, fragment: unknown, i: number) => string
}

/** Names every hoisted component after its `$id` (`Item`, `ItemPage`) instead of `def-0`. */
export const refResolver: RefResolver = {
  buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
}

type HeaderObject = { required?: boolean, schema?: Record<string, unknown> }
type Content = Record<string, { schema?: Record<string, unknown> }>
// What @fastify/swagger generates, before a transformObject of the user's: every path has operations, every operation responses.
type GeneratedPaths = Record<string, Record<string, {
  operationId?: string
  requestBody?: { content?: Content, required?: boolean }
  responses: Record<string, { headers?: Record<string, HeaderObject>, content?: Content }>
}>>

/**
 * A named body is referenced directly. The generator hoists an `$id` schema into a
 * component only when it is nested, so the route schema wraps it in a one-member `allOf`;
 * in the document that wrapper says nothing (linters flag it), and a bare `$ref` is what
 * OpenAPI 3.1 clients read best.
 */
function unwrapReferences (paths: GeneratedPaths): void {
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const contents = [
        operation.requestBody?.content,
        ...Object.values(operation.responses).map((response) => response.content)
      ]
      for (const content of contents) {
        for (const media of Object.values(content ?? {})) {
          const schema = media.schema
          if (schema !== undefined && Object.keys(schema).length === 1 && Array.isArray(schema.allOf) &&
            schema.allOf.length === 1) media.schema = schema.allOf[0]
        }
      }
    }
  }
}

/** Headers marked `alwaysSent` become `required: true`; the marker leaves the schema. */
function markRequiredHeaders (paths: GeneratedPaths): void {
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

/**
 * The generator marks every request body `required`, since Fastify's own validation refuses a
 * missing one; a view route's optional body (`Type.Optional`) is not, and its operation says so.
 */
function markOptionalBodies (paths: GeneratedPaths, operationIds: ReadonlySet<string | undefined>): void {
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const body = operation.requestBody
      if (body !== undefined && operationIds.has(operation.operationId)) body.required = false
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
 * A route schema whose `content` bodies (problems, a body taken in several media types)
 * reference named components collected for the document.
 */
function withComponents<S> (components: ComponentCollector, schema: S): S {
  // A route's schema as Fastify hands it to the transform: its parts by name, each as the route declared it.
  const { response, body } = (schema ?? {}) as { response?: Record<string, unknown>, body?: unknown }
  const shown = components.responses(response)
  const shownBody = components.content(body)
  if (shown === response && shownBody === body) return schema
  return { ...schema, response: shown, ...(shownBody === body ? {} : { body: shownBody }) }
}

/**
 * Options for `@fastify/swagger` that document view routes as intended: OpenAPI 3.1
 * (JSON Schema 2020-12: `const`, `anyOf` with `null`), components named after their
 * `$id`, the problem bodies (and any other `content` schema with an `$id`) as components of
 * each document, and what `responses` entries
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
  // One collector per call, so per application: each document names its own components.
  const components = new ComponentCollector()
  const order = new DocumentOrder()
  // The operations whose body may be left out, by operationId (unique in a document), noted while it is generated.
  const optionalBodies = new Set<string | undefined>()
  const transform: SwaggerTransform = (input) => {
    // View routes carry their view and action in their config; the application's own routes do not.
    order.note(input.url, input.route.config?.view, input.route.config?.action)
    const tag = (input.schema as { [DOCUMENTED_TAG]?: DocumentTag } | undefined)?.[DOCUMENTED_TAG]
    if (tag !== undefined) order.noteTag(tag)
    // The generator looks up every scheme an operation names as it documents it: they are there first.
    const schemes = (input.schema as { [SECURITY_SCHEMES]?: Record<string, unknown> } | undefined)?.[SECURITY_SCHEMES]
    if (schemes !== undefined && 'openapiObject' in input) addSecuritySchemes(input.openapiObject, schemes)
    const marked = input.schema as { [OPTIONAL_BODY]?: true, operationId?: string } | undefined
    // Every view route has an operationId (buildRouteSchema gives it one).
    if (marked?.[OPTIONAL_BODY] === true) optionalBodies.add(marked.operationId)
    const schema = withComponents(components, documentedSchema(input.schema))
    if (theirTransform === undefined) return { schema, url: input.url }
    return theirTransform(schema === input.schema ? input : { ...input, schema })
  }
  const theirs = options.transformObject
  const transformObject: SwaggerTransformObject = (input) => {
    if (!('openapiObject' in input)) return theirs === undefined ? input.swaggerObject : theirs(input)
    const openapiObject = input.openapiObject
    components.addTo(openapiObject)
    const paths = openapiObject.paths as GeneratedPaths // the generator's own output: its type allows the absent parts it never leaves out
    markRequiredHeaders(paths)
    markOptionalBodies(paths, optionalBodies)
    optionalBodies.clear()
    unwrapReferences(paths)
    order.apply(openapiObject as { paths: GeneratedPaths, tags?: DocumentTag[] }) // the 3.1 document's paths and tags, as the generator wrote them
    return theirs === undefined ? openapiObject : theirs({ openapiObject })
  }
  return { ...options, openapi: { openapi: '3.1.0', ...document }, refResolver, transform, transformObject }
}

/** The schemes the operations name, beside the ones the application declared itself (which win). */
function addSecuritySchemes (
  document: { components?: { securitySchemes?: Record<string, unknown> } },
  schemes: Record<string, unknown>
): void {
  document.components ??= {}
  document.components.securitySchemes = { ...schemes, ...document.components.securitySchemes }
}
