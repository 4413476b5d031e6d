// Components (openapi layer): the named schemas of one document (problems, bodies of several media types), collected while it is generated.
import { ConfigurationError } from '../core/configuration-error.js'

type Json = Record<string, unknown>

/**
 * The named components of one OpenAPI document, collected from route schemas while
 * `@fastify/swagger` generates it. The generator hoists `$id` schemas only out of
 * plain-form (success) bodies; those under a response's `content` (every problem body)
 * it would inline. Collecting them per document, rather than in a registry of the
 * module, keeps each application's names its own: two apps in one process may each
 * have their own `GoneProblem`.
 */
export class ComponentCollector {
  readonly #collected = new Map<string, { source: Json, json: Json, text: string }>()

  /** The schema as the document shows it: it and every nested `$id` schema become `$ref`s to components. */
  reference (schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.reference(s))
    if (typeof schema !== 'object' || schema === null) return schema
    const source = schema as Json
    if (typeof source.$id === 'string') return this.#component(source.$id, source)
    return this.#members(source)
  }

  /** Every response's `content` schemas referenced; a route schema is never changed in place (Fastify holds it). */
  responses (response: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    if (response === undefined) return undefined
    let out: Record<string, unknown> | undefined
    for (const [status, doc] of Object.entries(response)) {
      const shown = this.content(doc)
      if (shown === doc) continue
      out ??= { ...response }
      out[status] = shown
    }
    return out ?? response
  }

  /** A body or response given per media type (`{ content: { type: { schema } } }`) with its schemas referenced; anything else as it is. */
  content (doc: unknown): unknown {
    const content = (doc as { content?: Record<string, { schema?: unknown }> } | null)?.content
    if (content === undefined) return doc
    const shown: Record<string, unknown> = {}
    for (const [type, media] of Object.entries(content)) {
      shown[type] = media.schema === undefined
        ? media
        : {
            ...media,
            schema: this.reference(media.schema)
          }
    }
    return { ...(doc as Json), content: shown }
  }

  /**
   * Adds what was collected to the document's components and starts afresh for the next
   * generation. A component the generator already hoisted under the name (a shared
   * schema of the app) is left as it is.
   */
  addTo (document: { components?: { schemas?: Record<string, unknown> } }): void {
    const components = document.components ?? (document.components = {})
    const schemas = components.schemas ?? (components.schemas = {})
    for (const [name, { json }] of this.#collected) schemas[name] ??= json
    this.#collected.clear()
  }

  #component (name: string, source: Json): Json {
    const known = this.#collected.get(name)
    if (known === undefined) {
      // Registered before its members, so a schema that refers to itself ends.
      const entry = { source, json: {}, text: '' }
      this.#collected.set(name, entry)
      entry.json = this.#members(source, true)
      entry.text = JSON.stringify(entry.json)
    } else if (known.source !== source && known.text !== '' && known.text !== JSON.stringify(this.#members(source, true))) {
      throw new ConfigurationError('FV_ERR_COMPONENT_CLASH', `Two different schemas are documented as the component "${name}"; give one of them (or its error class) another name`)
    }
    return { $ref: `#/components/schemas/${name}` }
  }

  /** The members of an object schema, each referenced; the `$id` of a component's own root is dropped. */
  #members (source: Json, root = false): Json {
    const out: Json = {}
    for (const key of Object.keys(source)) {
      if (root && key === '$id') continue
      out[key] = this.reference(source[key])
    }
    return out
  }
}
