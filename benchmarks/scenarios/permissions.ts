import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { configureApp, views } from '../../lib/index.js'
import { IsAuthenticated, permission, type Authenticator } from '../../lib/access.js'
import { asyncRepository, AsyncGenericRetrieveAPIView, MemoryRepository, type Criteria } from '../../lib/generics.js'
import type { Scenario } from './types.js'

const PREFIX = '/permissions'

/** The item: `{ id, owner_id, name, price, updated_at (date-time) }`. */
const Item = Type.Object({
  id: Type.Integer(),
  owner_id: Type.Integer(),
  name: Type.String(),
  price: Type.Number(),
  updated_at: Type.String({ format: 'date-time' })
})
type Item = Static<typeof Item>
const IdParams = Type.Object({ id: Type.Integer() })

/** The item every variant requests, and the user who asks for it: its owner. */
const DETAIL_ID = 7
const USER = '7'

/** 20 items, ids 1-20, owned by users 0-9 (item 7 by user 7). */
const items = (): Item[] => Array.from({ length: 20 }, (_, i) => ({
  id: i + 1,
  owner_id: (i + 1) % 10,
  name: `Item ${i + 1}`,
  price: Math.round((4.99 + i * 1.25) * 100) / 100,
  updated_at: new Date(Date.UTC(2026, 0, 1 + i, 10, 0, 0, 500)).toISOString()
}))

/** Who may ask: `x-user: 7` names user 7; `x-user: 1`, an administrator. */
interface User { id: number, admin: boolean }
const USERS = new Map<string, User>([
  ['1', { id: 1, admin: true }],
  ...Array.from({ length: 9 }, (_, i): [string, User] => [String(i + 2), { id: i + 2, admin: false }])
])

const CHALLENGE = 'User realm="bench"'

/** The one lookup both sides make: `undefined` without the header, `null` for a name nobody has. */
function userOf (request: FastifyRequest): User | null | undefined {
  const name = request.headers['x-user']
  if (name === undefined) return undefined
  return typeof name === 'string' ? USERS.get(name) ?? null : null
}

/** The same lookup as the library's authenticator protocol: synchronous, a map read. */
const byHeader: Authenticator<User> = {
  scheme: 'userHeader',
  securityScheme: { type: 'apiKey', in: 'header', name: 'x-user' },
  challenge: CHALLENGE,
  authenticate: userOf
}

const IsOwner = permission<Item, User>({ name: 'IsOwner', scope: (user) => ({ owner_id: user.id }) })
const IsAdmin = permission<unknown, User>({ name: 'IsAdmin', request: (user) => user.admin })

/** An unauthenticated request, answered by the hand-written hooks as the application's errors look. */
const unauthorized = (reply: FastifyReply): Error => {
  reply.header('www-authenticate', CHALLENGE)
  reply.code(401)
  return Object.assign(new Error('Unauthorized'), { statusCode: 401 })
}

/** The hand-written route's request, with what its hooks keep (decorated in its own context only). */
type GuardedRequest = FastifyRequest<{ Params: { id: number } }> & { caller: User | null, owned: Item | null }

/** Every route of the scenario, on `app`: each variant in a context of its own, so `auth` reaches only the permissions view. */
async function registerRoutes (app: FastifyInstance): Promise<void> {
  const repository = asyncRepository<Item, MemoryRepository<Item>>(new MemoryRepository<Item>({ rows: items() }))

  // Hand-written: an `onRequest` hook resolves the user (401 without one), a `preHandler` checks
  // the same two rules (signed in; the owner, unless an administrator) by reading the row scoped
  // to its owner (404 outside), and the handler answers it through the same response schema.
  await app.register(async (scope) => {
    scope.decorateRequest('caller', null)
    scope.decorateRequest('owned', null)
    scope.addHook('onRequest', async function authenticate (request, reply) {
      const user = userOf(request)
      if (user === undefined || user === null) throw unauthorized(reply)
      ;(request as GuardedRequest).caller = user
    })
    scope.get<{ Params: { id: number } }>(`${PREFIX}/baseline/items/:id`, {
      schema: { params: IdParams, response: { 200: Item } },
      preHandler: async function authorize (request, reply) {
        const user = (request as GuardedRequest).caller
        if (user === null || user === undefined) throw unauthorized(reply) // IsAuthenticated
        // IsOwner.or(IsAdmin): an administrator reads any row, anyone else their own.
        const criteria: Criteria = user.admin ? { id: request.params.id } : { id: request.params.id, owner_id: user.id }
        const item = await repository.get(criteria, {})
        if (item === null) throw Object.assign(new Error('Not Found'), { statusCode: 404 })
        ;(request as GuardedRequest).owned = item
      }
    }, async function getItem (request) {
      return (request as GuardedRequest).owned
    })
  })

  class Items extends AsyncGenericRetrieveAPIView<{ item: Item, params: { id: number } }> {
    static override responseSchema = Item
    static override detailParams = IdParams
    static override repository = repository
  }
  // Checked as the hand-written route is not: what validateResponse costs is not the question here.
  class OpenItems extends Items {
    static override validateResponse = false
  }
  class GuardedItems extends OpenItems {
    static override permissions = [IsAuthenticated, IsOwner.or(IsAdmin)]
  }
  // configureApp: false: the app around is configured already.
  await app.register(async (scope) => {
    await scope.register(views, { configureApp: false, auth: { authenticators: [byHeader] }, views: [{ view: GuardedItems, prefix: `${PREFIX}/views/items` }] })
  })
  await app.register(async (scope) => {
    await scope.register(views, { configureApp: false, views: [{ view: OpenItems, prefix: `${PREFIX}/views-open/items` }] })
  })
}

const VARIANTS = ['baseline', 'views', 'views-open'] as const
/** The request of a variant: item `id` asked by `user` (`null`: no `x-user`). */
const requestOf = (variant: string, id = DETAIL_ID, user: string | null = USER) => ({
  method: 'GET' as const,
  path: `${PREFIX}/${variant}/items/${id}`,
  ...user === null ? {} : { headers: { 'x-user': user } }
})

/**
 * Once, before the scenario's routes are served: every variant answers the same status, headers
 * (but `date`) and body bytes to the measured request, and the guarded routes refuse and hide alike.
 */
async function assertSameAnswers (): Promise<void> {
  const probe = configureApp(Fastify({ logger: false }))
  await probe.register(registerRoutes)
  await probe.ready()
  try {
    const answer = async (variant: string, id?: number, user?: string | null) => {
      const { method, path, headers } = requestOf(variant, id, user)
      const response = await probe.inject({ method, url: path, ...headers === undefined ? {} : { headers } })
      const { date: _date, ...rest } = response.headers
      return JSON.stringify({ status: response.statusCode, headers: rest, body: response.body })
    }
    const expected = await answer('baseline')
    if (!expected.includes('"status":200')) throw new Error(`permissions-retrieve: the baseline answered ${expected}`)
    for (const variant of VARIANTS) {
      const got = await answer(variant)
      if (got !== expected) throw new Error(`permissions-retrieve: ${variant} answers otherwise than the baseline\n  baseline: ${expected}\n  ${variant}: ${got}`)
    }
    // The refusals (not measured): 401 without a user, 404 for another's item, 200 for an administrator.
    for (const variant of ['baseline', 'views']) {
      const status = async (id: number, user: string | null) =>
        JSON.parse(await answer(variant, id, user)).status as number
      const statuses = [await status(DETAIL_ID, null), await status(DETAIL_ID, 'nobody'), await status(8, USER), await status(8, '1')]
      if (statuses.join() !== '401,401,404,200') throw new Error(`permissions-retrieve: ${variant} answered ${statuses.join()} (expected 401,401,404,200)`)
    }
  } finally {
    await probe.close()
  }
}

/** GET one item by id, its owner asking: permissions against the same checks by hand. */
export const permissionsRetrieve: Scenario = {
  name: 'permissions-retrieve',
  description: `GET /items/:id (integer id) of item ${DETAIL_ID} of a 20-row in-memory repository, asked by its owner (x-user: ${USER}, a synchronous map lookup); ` +
    'signed in, and the owner unless an administrator; response schema Item',
  rounds: 4,
  duration: 1.5,
  warmup: 1,
  async register (app: FastifyInstance) {
    await assertSameAnswers()
    await registerRoutes(app)
  },
  baseline: {
    name: 'baseline',
    label: 'hand-written Fastify route: onRequest hook resolving the user, preHandler reading the row scoped to its owner unless admin',
    request: requestOf('baseline')
  },
  variants: [
    {
      name: 'views',
      label: 'AsyncGenericRetrieveAPIView, permissions [IsAuthenticated, IsOwner.or(IsAdmin)], auth: the same lookup (validateResponse = false)',
      request: requestOf('views')
    },
    {
      name: 'views-open',
      label: 'the same view without permissions or auth: what access costs inside the view',
      request: requestOf('views-open')
    }
  ],
  // The target, views within 2 % of the hand-written route; this machine's load runs cannot
  // resolve it, the instructions per request can (npm run bench:instructions, docs/performance.md).
  ratioTarget: 0.02
}
