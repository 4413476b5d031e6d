// The serializer compiler of view routes (schema layer): Fastify's fast-json-stringify, shared by equal schemas, with the application's shared schemas.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyInstance } from 'fastify'

type Serialize = (payload: unknown) => string

/** Where a documented response (the body with its description and headers) keeps the body it serializes. */
const SERVED_BODY = Symbol('fastify-views.servedBody')

/**
 * Marks a documented response with the body schema it is served with: the serializer is
 * compiled from that body, once however many routes wrap it in a response of their own (a
 * view's retrieve, create and updates send one item). Not enumerable: the document never sees it.
 */
export function servedBy<R extends object> (response: R, body: object): R {
  Object.defineProperty(response, SERVED_BODY, { value: body })
  return response
}
type SerializerCompiler = (input: { schema: object, httpStatus?: string, contentType?: string }) => Serialize

/**
 * The serializer compiler of view routes. Error bodies are sent already serialized by the
 * error format's handler, so a route gives Fastify no error status to compile; every other
 * schema is compiled once by Fastify's own compiler, with the app's shared schemas, and reused
 * wherever the same object recurs.
 */
export function serializerCompilerFor (app?: FastifyInstance): SerializerCompiler {
  // Fastify boundary: the selector's declared type is Fastify's generic compiler factory; called with a schema it returns fast-json-stringify's function.
  const compile = SerializerSelector()(
    app?.getSchemas() ?? {},
    {}
  ) as unknown as (input: { schema: object }) => Serialize
  const cache = new WeakMap<object, Serialize>()
  return ({ schema, httpStatus }) => {
    const body = (schema as { [SERVED_BODY]?: object })[SERVED_BODY] ?? schema
    let serialize = cache.get(body)
    if (serialize === undefined) {
      serialize = compile({ schema: body, ...(httpStatus === undefined ? {} : { httpStatus }) })
      cache.set(body, serialize)
    }
    return serialize
  }
}
