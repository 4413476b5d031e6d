import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyInstance } from 'fastify'

type Serialize = (payload: unknown) => string
type SerializerCompiler = (input: { schema: object, httpStatus?: string, contentType?: string }) => Serialize

/**
 * The serializer compiler of view routes. Error bodies are sent already serialized by the
 * error format's handler, so a route gives Fastify no error status to compile; every other
 * schema is compiled once by Fastify's own compiler, with the app's shared schemas, and reused
 * wherever the same object recurs.
 */
export function serializerCompilerFor (app?: FastifyInstance): SerializerCompiler {
  // Fastify boundary: the selector's declared type is Fastify's generic compiler factory; called with a schema it returns fast-json-stringify's function.
  const compile = SerializerSelector()(app?.getSchemas() ?? {}, {}) as unknown as (input: { schema: object }) => Serialize
  const cache = new WeakMap<object, Serialize>()
  return ({ schema, httpStatus }) => {
    let serialize = cache.get(schema)
    if (serialize === undefined) {
      serialize = compile({ schema, ...(httpStatus === undefined ? {} : { httpStatus }) } as { schema: object })
      cache.set(schema, serialize)
    }
    return serialize
  }
}
