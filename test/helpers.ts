import Fastify, { type FastifyInstance, type FastifyServerOptions, type LightMyRequestResponse } from 'fastify'
import views, { type FastifyViewsOptions } from '../lib/index.js'

/** A Fastify app with the plugin registered and ready; closed by the caller (or `t.teardown`). */
export async function build (options: FastifyViewsOptions, serverOptions: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, ...serverOptions })
  await app.register(views, options)
  await app.ready()
  return app
}

import type { Test } from 'tap'

type Assert = Pick<Test, 'equal' | 'match'>

/** Asserts an RFC 9457 problem response and returns its body. */
export function problem (t: Assert, res: LightMyRequestResponse, status: number): Record<string, any> {
  t.equal(res.statusCode, status, `status ${status}`)
  t.match(res.headers['content-type'], /^application\/problem\+json/, 'problem+json media type')
  const body = res.json()
  t.equal(body.status, status, 'status member')
  t.equal(typeof body.title, 'string', 'title member')
  t.equal(typeof body.detail, 'string', 'detail member')
  t.equal(body.type, body.type ?? 'about:blank')
  t.equal(typeof body.instance, 'string', 'instance member')
  t.equal(JSON.stringify(body).includes('    at '), false, 'no stack trace')
  return body
}
