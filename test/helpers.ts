import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions, type LightMyRequestResponse } from 'fastify'
import views from '../lib/index.js'
import type { FastifyViewsOptions } from '../lib/types.js'
import { MemoryRepository, type RepositoryOptions } from '../lib/generics.js'
import { PatchError } from '../lib/http/patch-error.js'
import type { Authenticator } from '../lib/access.js'

/** A Fastify app with the plugin registered and ready; closed by the caller (or `t.teardown`). */
export async function build (
  options: FastifyViewsOptions,
  serverOptions: FastifyServerOptions = {}
): Promise<FastifyInstance> {
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

/** The six standard CRUD actions as one request each, under a view's prefix; `destroy` takes row 2, the others row 1. */
export const CRUD_REQUESTS = [
  { action: 'list', method: 'GET', path: '', status: 200 },
  { action: 'create', method: 'POST', path: '', status: 201, payload: { name: 'created', price: 1 } },
  { action: 'retrieve', method: 'GET', path: '/1', status: 200 },
  { action: 'update', method: 'PUT', path: '/1', status: 200, payload: { name: 'put', price: 2 } },
  { action: 'partialUpdate', method: 'PATCH', path: '/1', status: 200, payload: { price: 7 } },
  { action: 'destroy', method: 'DELETE', path: '/2', status: 204 }
] as const

/** The order of the methods in an `Allow` header: GET, HEAD, POST, PUT, PATCH, DELETE, then OPTIONS. */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/**
 * The `Allow` header a configured app (`configureApp`) answers a request to a path of `CRUD_REQUESTS`
 * with when its method is not served there: the methods of the `actions` served on that path (a GET
 * brings its HEAD), OPTIONS last; `undefined` when none is, and the path is a 404.
 */
export function allowOf (actions: readonly string[], detail: boolean): string | undefined {
  const methods = CRUD_REQUESTS
    .filter((request) => (request.path !== '') === detail && actions.includes(request.action))
    .flatMap((request) => request.method === 'GET' ? ['GET', 'HEAD'] : [request.method])
  if (methods.length === 0) return undefined
  return ALLOW_ORDER.filter((method) => method === 'OPTIONS' || methods.includes(method)).join(', ')
}

/**
 * Sends every request of `CRUD_REQUESTS` under `prefix`: the `actions` a view composes answer their
 * status (JSON, or an empty body for 204). Every other one is, on an app the plugin configured
 * (`configured`, the default), a 405 problem whose `Allow` lists the methods the path is served
 * with, or the route 404 as a problem where no action serves the path; on an app without
 * `configureApp`, Fastify's own 404. Returns the responses by action name.
 */
export async function expectActions (
  t: Assert,
  app: FastifyInstance,
  prefix: string,
  actions: readonly string[],
  { configured = true }: { configured?: boolean } = {}
): Promise<Record<string, LightMyRequestResponse>> {
  const out: Record<string, LightMyRequestResponse> = {}
  for (const { action, method, path, status, ...rest } of CRUD_REQUESTS) {
    const url = prefix + path
    const res = await app.inject({ method, url, payload: 'payload' in rest ? rest.payload : undefined })
    out[action] = res
    if (actions.includes(action)) {
      t.equal(res.statusCode, status, `${method} ${url}: ${action} answers ${status}`)
      if (status === 204) t.equal(res.body, '', `${method} ${url}: no body`)
      else t.match(res.headers['content-type'], /^application\/json/, `${method} ${url}: JSON`)
      continue
    }
    const allow = configured ? allowOf(actions, path !== '') : undefined
    if (allow === undefined) {
      t.equal(res.statusCode, 404, `${method} ${url}: no ${action} route, and none on the path`)
      if (configured) t.equal(problem(t, res, 404).detail, `Route ${method} ${url} not found.`, `${method} ${url}: the route 404 as a problem`)
      else t.equal(res.json().message, `Route ${method}:${url} not found`, `${method} ${url}: Fastify's own 404`)
      t.equal(res.headers.allow, undefined, `${method} ${url}: no Allow`)
    } else {
      t.equal(problem(t, res, 405).detail, `${url} does not take ${method}; it takes ${allow}.`, `${method} ${url}: no ${action} route`)
      t.equal(res.headers.allow, allow, `${method} ${url}: Allow names the methods of the path`)
    }
  }
  return out
}

/** What `act` throws or rejects with; `undefined` when it completes. */
export async function caught (act: () => unknown): Promise<unknown> {
  try {
    await act()
  } catch (error) {
    return error
  }
  return undefined
}

/** The PatchError `run` throws, as its pointer and message; anything else (or nothing) fails the test that asked. */
export function patchError (run: () => unknown): { pointer: string, message: string } {
  try {
    run()
  } catch (error) {
    if (error instanceof PatchError) return { pointer: error.pointer, message: error.message }
    throw error
  }
  throw new Error('no PatchError was thrown')
}

/**
 * A MemoryRepository that stamps `updated_at` on every create, as a database default or trigger
 * would: what a view whose response requires `updated_at`, and whose body does not carry it, needs.
 */
export class StampingRepository<T extends object> extends MemoryRepository<T> {
  override create (values: Record<string, unknown>, options?: RepositoryOptions): T | null {
    return super.create({ updated_at: new Date().toISOString(), ...values }, options)
  }
}

/**
 * An authenticator that names its principal by a header (`x-user: ann`): no header, anonymous; a
 * name `users` lacks, refused (401). `scheme`, `challenge` and the header follow `noun` ('user':
 * `x-user`, `User realm="test"`).
 */
export function headerAuth<P> (users: Readonly<Record<string, P>>, noun = 'user', scopesOf?: (principal: P) => readonly string[]): Authenticator<P> {
  const header = `x-${noun}`
  return {
    scheme: noun,
    securityScheme: { type: 'apiKey', in: 'header', name: header },
    challenge: `${noun.charAt(0).toUpperCase()}${noun.slice(1)} realm="test"`,
    authenticate (request: FastifyRequest) {
      const name = request.headers[header]
      if (name === undefined) return undefined
      return typeof name === 'string' && Object.hasOwn(users, name) ? users[name] : null
    },
    ...scopesOf === undefined ? {} : { scopesOf }
  }
}
