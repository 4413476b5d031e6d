import type { Test } from 'tap'
import { Type } from '@sinclair/typebox'
import { AsyncGenericViewSet, GenericViewSet, type AsyncRepository, type Repository } from '../lib/generics.js'
import { build } from './helpers.js'

/** A table with a column the repository is not told about. */
export const USERS_TABLE = 'CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, password_hash TEXT NOT NULL DEFAULT \'$2b$secret\')'
export const USERS_SEED = "INSERT INTO users (id, name, password_hash) VALUES (1, 'ada', '$2b$ada-hash')"
export const USERS_OPTIONS = { table: 'users', columns: ['id', 'name'] }

/**
 * Every read and write answer of a generic view over the table, even with a response schema
 * that sends every field it is given: the undeclared column never leaves the store.
 */
export async function checkNoHiddenColumn (
  t: Test,
  repository: Repository<unknown> | AsyncRepository<unknown>,
  async: boolean
): Promise<void> {
  const Base = async ? AsyncGenericViewSet : GenericViewSet
  class Users extends (Base as typeof GenericViewSet) {
    static override responseSchema = Type.Object({}, { additionalProperties: true })
    static override createSchema = Type.Object({ id: Type.Integer(), name: Type.String() })
    static override updateSchema = Type.Object({ name: Type.String() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override repository = repository as never
  }
  const app = await build({ views: [{ view: Users, prefix: '/users' }] })
  t.teardown(() => app.close())
  const answers = {
    'GET /users': await app.inject('/users'),
    'GET /users/1': await app.inject('/users/1'),
    'POST /users': await app.inject({ method: 'POST', url: '/users', payload: { id: 2, name: 'bob' } }),
    'PUT /users/1': await app.inject({ method: 'PUT', url: '/users/1', payload: { name: 'ada l.' } }),
    'PATCH /users/2': await app.inject({ method: 'PATCH', url: '/users/2', payload: { name: 'bob b.' } })
  }
  for (const [request, res] of Object.entries(answers)) {
    t.ok(res.statusCode < 300, `${request}: ${res.statusCode}`)
    t.notMatch(res.body, /password_hash|\$2b\$/, `${request} sends no undeclared column`)
  }
  t.same(answers['GET /users'].json(), [{ id: 1, name: 'ada' }], 'the list has the declared columns only')
  t.same(answers['PATCH /users/2'].json(), { id: 2, name: 'bob b.' }, 'a write returns the declared columns only')
}
