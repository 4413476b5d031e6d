// The members of `list` and `create` (views layer): the list's array or envelope, and the create's
// body, its 409 and the `Location` of what it made.
import { Type, type TSchema } from '@sinclair/typebox'
import { schemaStatic, type Schema } from '../../core/typebox-lines.js'
import { Conflict } from '../../http/errors.js'
import { alwaysSent } from '../../http/response-headers.js'
import { extendContribution, type ActionRoute, type AfterAction, type RouteContribution, type RouteDefinition, type StandardAction, type View } from '../view.js'
import type { ViewBase } from '../mixins.js'
import { withSchema, type CreateActions, type CreateStatics, type ListStatics } from './standard.js'

const defaultGetLocation = (): string | undefined => undefined

/** Whether a create view sends `Location`: its `getLocation` is its own, not the default. */
const providesLocation = (k: ViewBase): boolean => (k.prototype as Partial<CreateActions<unknown,
  false>>).getLocation !== defaultGetLocation

/** Sends the `Location` of a created object, when `getLocation` gives one. */
const sendLocation: AfterAction = (view, value, reply) => {
  const location = (view as View & Pick<CreateActions<unknown, false>, 'getLocation'>).getLocation(value)
  if (location !== undefined) reply.header('location', location)
}

/** The documented `Location` of a create view that provides one: its getLocation answers every created object (docs/actions.md). */
const LOCATION_HEADER = alwaysSent(Type.String({ format: 'uri-reference', description: 'The URL of the created item.' }))

/** The item schema `list` sends: `listItemSchema`, else `responseSchema`. */
export const listItemOf = (
  klass: { readonly name: string, readonly listItemSchema?: Schema, readonly responseSchema?: Schema }
): TSchema | undefined =>
  schemaStatic(klass, 'listItemSchema') ?? schemaStatic(klass, 'responseSchema')

/** The statics and route of `list`: an array of its item schema, unless `responseSchemaAsList` is off. */
export const listMembers = <B extends ViewBase>(Base: B): B & ListStatics => class extends Base {
  static responseSchemaAsList = true
  static listItemSchema: Schema | undefined = undefined

  static override getActionRoute (action: StandardAction): ActionRoute {
    const route = super.getActionRoute(action)
    if (action.name !== 'list') return route
    // An envelope the view returns itself is its responseSchema, whatever its items are.
    const item = this.responseSchemaAsList ? listItemOf(this) : undefined
    return item === undefined ? route : { ...route, responseSchema: Type.Array(item) }
  }
}

/** The statics and route of `create`: its body, the 409 of `null`, the 201's `Location`. */
export const createMembers = <B extends ViewBase>(Base: B): B & CreateStatics => {
  const cls = class extends Base {
    static createSchema: Schema | undefined = undefined
    static returnOnCreate = true

    static override getActionRoute (action: StandardAction): ActionRoute {
      const route = super.getActionRoute(action)
      if (action.name !== 'create') return route
      return {
        ...route,
        options: this.createSchema === undefined
          ? route.options
          : withSchema(
            route.options,
            { body: this.createSchema }
          ),
        onNone: () => new Conflict(),
        emptyBody: this.returnOnCreate === false,
        after: providesLocation(this) ? sendLocation : undefined
      }
    }

    // The 201 documents `Location` when the view provides one (docs/actions.md).
    static override contribute (route: RouteDefinition, method: string): RouteContribution {
      const inherited = super.contribute(route, method)
      if (route.name !== 'create' || !providesLocation(this)) return inherited
      const location = { [route.status]: { headers: { location: LOCATION_HEADER } } }
      return extendContribution(inherited, { responses: location })
    }
  }
  Object.defineProperty(cls.prototype, 'getLocation', { value: defaultGetLocation, writable: true, configurable: true })
  return cls
}
