// Soft delete (views layer): `SoftDeleteMixin`, a DELETE that stamps a column, reads that skip stamped rows, `POST /{id}/restore` and `?deleted=`.
import { Type, type TObject } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { schemaStatic } from '../../core/typebox-lines.js'
import { ConfigurationError } from '../../core/configuration-error.js'
import { defineStaticGroup } from '../../core/static-groups.js'
import { then, type MaybePromise } from '../../core/maybe-promise.js'
import { Conflict, Forbidden, Unauthorized } from '../../http/errors.js'
import type { ResponsesMap } from '../../routes/types.js'
import { compileAccess, Denied, type Verdict } from '../../access/access-rule.js'
import { refusal } from '../../access/authenticator.js'
import { Permission } from '../../access/permission.js'
import { scopedBy } from '../../access/scope-criteria.js'
import { fieldNamesOf, storedFieldNamesOf, type Criteria, type RepositoryOptions } from '../../stores/repository.js'
import type { SchemaNode } from '../../core/schema-node.js'
import { actionMixin, DETAIL, STANDARD_ACTIONS, withSchema, type ActionRequest, type ActionViewClass, type Get, type ItemOf, type SentReply } from '../actions/standard.js'
import { extendContribution, type ActionRoute, type BeforeAction, type RouteContribution, type RouteDefinition, type StandardAction } from '../view.js'
import { onePrecondition } from '../write.js'
import { GENERIC, type GenericBase, type GenericMixinBase, type GenericView, type ObjectOf } from './generic-view.js'
import { judgeObject } from './object-permissions.js'
import { loadParent } from './parent.js'

/** What `SoftDeleteMixin` does for a view (docs/soft-delete.md), set as `static softDelete = { field: 'deleted_at' }`. */
export interface SoftDeleteOptions {
  /** The field that holds when a row was deleted (an ISO 8601 date-time), `null` while it is not. Default `deleted_at`. */
  field?: string
  /**
   * Who may ask for deleted rows with `?deleted=include` or `?deleted=only` on the list and the
   * detail read: a permission judged on the request (a 403, or a 401 for an anonymous request).
   * Unset: nobody, and the parameter is not offered.
   */
  deleted?: Permission<never> | undefined
}

/** The `softDelete` group of statics. */
export const SOFT_DELETE = defineStaticGroup<SoftDeleteOptions>('softDelete', { field: 'deleted_at', deleted: undefined })

/** Statics of `SoftDeleteMixin`. */
export interface SoftDeleteStatics {
  /** What it does: `{ field, deleted }` (docs/soft-delete.md). */
  softDelete: SoftDeleteOptions
}

/** What `?deleted=` asks for: deleted rows beside the others, or deleted rows only. */
export type DeletedMode = 'include' | 'only'

/** The instance members `SoftDeleteMixin` adds, typed by the view's models `M`. */
export interface SoftDeleteMembers<M> {
  /** `POST {detail path}/restore`: clears the field of a deleted row; 404 without one, 409 when it is not deleted. */
  restore (request: ActionRequest<Get<M, 'params', { id: string }>, unknown, unknown>): MaybePromise<ItemOf<M> | null | undefined | SentReply>
  /**
   * The write of a restore (a seam, as `performDestroy` is): `repository.update(criteria, { [field]: null }, options)`,
   * `options.precondition` carrying the object permission and `If-Match`; `null` when no deleted row matched.
   */
  performRestore (criteria: Criteria, options: RepositoryOptions, current?: ObjectOf<M>): MaybePromise<ItemOf<M> | null>
  /** The value a DELETE stamps the field with: the current time as an ISO 8601 string. */
  deletedStamp (): unknown
}

declare module '../mixins.js' {
  interface ActionRegistry<M> { softDelete: SoftDeleteMembers<M> }
  interface ActionNameRegistry { softDelete: 'restore' }
  interface StaticGroupRegistry { softDelete: SoftDeleteOptions }
}

/** The restore action: POST on `{detail path}/restore`, 200, the restored object; 409 when it is not deleted. */
export const RESTORE_ACTION = { name: 'restore', method: 'POST', detail: true, status: 200, throws: [Conflict], store: { sendsRows: true } } as const satisfies StandardAction

/** The query parameter of `?deleted=`, on the list and the detail read of a view that offers it. */
const DELETED_PARAMETER = Type.Union([Type.Literal('include'), Type.Literal('only')], {
  description: 'Deleted rows too (`include`), or only them (`only`): for the principals the view allows it.'
})

/** A soft-delete view as its own members see it. */
type SoftView = GenericView & SoftDeleteMembers<unknown> & { deletedMode: DeletedMode | undefined }

/** A soft-delete view's class, as the mixin builds it. */
type SoftClass = GenericBase & SoftDeleteStatics

/** The read actions that take `?deleted=`. */
const READS: ReadonlySet<string> = new Set(['list', 'retrieve'])

/** The field of a view class. */
const fieldOf = (klass: object): string => SOFT_DELETE.of(klass).field as string // registration refused any other

/** The criterion that selects deleted rows only: `deleted_at__is_null: false`. */
const deletedOnly = (field: string): Criteria => ({ [`${field}__is_null`]: false })

/**
 * Soft deletes for generic views (docs/soft-delete.md): mix it in before the generic actions
 * (after `ConditionalMixin`), `mix(SoftDeleteMixin, AsyncGenericViewSet)`. A DELETE stamps
 * `softDelete.field`; every read and write skips stamped rows; `POST {detail path}/restore` clears
 * the stamp; `softDelete.deleted` lets some principals read deleted rows with `?deleted=`.
 */
export const SoftDeleteMixin = actionMixin<ActionViewClass<'softDelete', SoftDeleteStatics>, GenericMixinBase>(
  'SoftDeleteMixin', RESTORE_ACTION, [...GENERIC, ...DETAIL], (Base) => class SoftDeleteMixin extends Base {
    static softDelete: SoftDeleteOptions = {}
    /** This request's `?deleted=`, once its permission allowed it (list and retrieve only). */
    declare deletedMode: DeletedMode | undefined

    static override assertRegistrable (): void {
      super.assertRegistrable()
      assertSoftDelete(this)
    }

    // The restore route is the detail path's `/restore`; the list and the detail read take
    // `?deleted=` where the view offers it.
    static override getActionRoute (action: StandardAction): ActionRoute {
      const route = super.getActionRoute(action)
      if (action.name === 'restore') return { ...route, path: `${route.path}/restore` }
      if (!READS.has(action.name) || SOFT_DELETE.of(this).deleted === undefined) return route
      const query = route.options.schema?.querystring as TObject | undefined // a filter's query schema is an object
      const querystring = query === undefined
        ? Type.Object({ deleted: Type.Optional(DELETED_PARAMETER) })
        : { ...query, properties: { ...query.properties, deleted: Type.Optional(DELETED_PARAMETER) } }
      return { ...route, options: withSchema(route.options, { querystring }) }
    }

    // Where `?deleted=` is offered, its permission is judged before the action (after validation:
    // a bad value is a 400 whoever sends it); its 401 and 403 are documented.
    static override contribute (route: RouteDefinition, method: string): RouteContribution {
      const inherited = super.contribute(route, method)
      const permission = SOFT_DELETE.of(this).deleted
      if (permission === undefined || !route.standard || !READS.has(route.name)) return inherited
      const compiled = compileAccess(permission.node, method, String(permission))
      const responses: ResponsesMap = { 403: { errors: [Forbidden] } }
      if (compiled.anonymous !== 'allow') responses[401] = { errors: [Unauthorized] }
      return extendContribution(inherited, { beforeAction: [deletedCheck(compiled.judge)], responses })
    }

    // Stamped rows are gone for every action (through `super`: the view's kwargs, its parent and
    // its permissions still apply), but a restore, which sees them only; `?deleted=` widens a read.
    override getScopeKwargs (action?: string): Criteria {
      const scope = super.getScopeKwargs(action)
      const field = fieldOf(this.constructor)
      if (action === 'restore') return scopedBy(scope, deletedOnly(field))
      const mode = action !== undefined && READS.has(action) ? this.deletedMode : undefined
      if (mode === 'include') return scope
      return scopedBy(scope, mode === 'only' ? deletedOnly(field) : { [field]: null })
    }

    // A DELETE stamps the row instead: the options carry the object permission and If-Match, checked
    // in the same atomic step as this write; a row stamped already is out of the criteria (a 404).
    override performDestroy (criteria: Criteria, options: RepositoryOptions): boolean {
      const values = { [fieldOf(this.constructor)]: (this as unknown as SoftView).deletedStamp() } // this mixin's instances are soft-delete views
      // Sync or async as the repository: the sync family's type, as GenericMixinBase gives it.
      const written = this.repository.update(criteria, values, options)
      return then(written, (row) => row !== null && row !== undefined) as boolean
    }

    deletedStamp (): unknown {
      return new Date().toISOString()
    }

    performRestore (criteria: Criteria, options: RepositoryOptions): unknown {
      return this.repository.update(criteria, { [fieldOf(this.constructor)]: null }, options)
    }

    restore (this: SoftView): unknown {
      return then(loadParent(this), () => {
        const described = this.describeWrite('restore')
        const options = this.getRepositoryOptions('restore')
        const precondition = onePrecondition(described)
        const checked = precondition === undefined ? options : { ...options, precondition }
        const written = this.performRestore(described.criteria, checked, described.current)
        return then(written, (row) => row ?? then(described.miss(), () => notDeleted(this, described.criteria)))
      })
    }
  })

/**
 * After a restore that matched no deleted row: a 409 when the row is there and not deleted (and
 * the client may see it), the action's 404 (`null`) when it is not there at all.
 */
function notDeleted (view: SoftView, criteria: Criteria): unknown {
  const field = fieldOf(view.constructor)
  const { [`${field}__is_null`]: _deleted, ...named } = criteria
  return then(view.repository.get({ ...named, [field]: null }, view.getRepositoryOptions('restore')), (found) => {
    if (found === null || found === undefined) return null
    judgeObject(view, found, 'restore')
    throw new Conflict('It is not deleted: there is nothing to restore.')
  })
}

/** The step that judges `?deleted=` on a read: the permission refuses (401 or 403), or the view reads in that mode. */
function deletedCheck (judge: (principal: unknown, request: FastifyRequest) => MaybePromise<Verdict>): BeforeAction {
  return (view, request) => {
    const mode = (request.query as { deleted?: DeletedMode } | undefined)?.deleted // the query as the route's schema validated it
    if (mode === undefined) return
    const decide = (verdict: Verdict): void => {
      if (verdict instanceof Denied) throw refusal(request, verdict.message ?? 'You may not read deleted rows.')
      ;(view as SoftView).deletedMode = mode // a view of this mixin's class
    }
    const verdict = judge(request.principal ?? null, request)
    return verdict instanceof Promise ? verdict.then(decide) : decide(verdict)
  }
}

/** The standard actions of the action views whose actions are the user's (`AsyncRetrieveAPIView`): no scope reaches them. */
const PLAIN_ACTIONS: ReadonlySet<StandardAction> = new Set(Object.values(STANDARD_ACTIONS).filter((action) => action.name !== 'destroy'))

/** The bulk actions a soft delete cannot honour: a bulk DELETE removes rows, a bulk PUT finds them by key alone, deleted or not. */
const UNSOFT_BULK: ReadonlySet<string> = new Set(['bulkDelete', 'bulkUpdate'])

/** Refuses, at registration, a soft delete that would not hold (FV_ERR_SOFT_DELETE). */
function assertSoftDelete (klass: SoftClass): void {
  const { field, deleted } = SOFT_DELETE.of(klass)
  const refuse = (why: string): never => {
    throw new ConfigurationError('FV_ERR_SOFT_DELETE', `Cannot register ${klass.name}: ${why} (docs/soft-delete.md)`)
  }
  if (typeof field !== 'string' || field === '') refuse(`softDelete.field must name the field that holds when a row was deleted, not ${JSON.stringify(field) ?? String(field)}`)
  const named = field as string
  for (const action of klass.standardActions()) {
    if (PLAIN_ACTIONS.has(action)) {
      refuse(`its ${action.name} is an action you write (${action.name} of an action view, not of a generic one), which the soft delete's scope never reaches: ` +
        'use the generic views (AsyncGenericRetrieveAPIView, ...)')
    }
    if (UNSOFT_BULK.has(action.name)) {
      refuse(`its ${action.name} would ${action.name === 'bulkDelete' ? 'remove the rows it selects rather than stamp them' : 'find rows by key alone, deleted ones too'}; ` +
        'leave it out of a soft-delete view')
    }
  }
  const repository: unknown = klass.repository
  const fixed = fieldNamesOf(repository)
  if (fixed !== undefined && !fixed.includes(named)) {
    refuse(`softDelete.field "${named}" is not a field of its repository (its fields: ${fixed.join(', ')})`)
  }
  const stored = storedFieldNamesOf(repository)
  const shown: Record<string, SchemaNode> | undefined = schemaStatic(klass, 'responseSchema')?.properties
  const unseen = stored !== undefined && stored.length > 0 && !stored.includes(named)
  if (fixed === undefined && unseen && (shown === undefined || !Object.hasOwn(shown, named))) {
    refuse(`softDelete.field "${named}" is in no row of its repository (their fields: ${stored.join(', ')}); give every row ${named}: null, or name the field they have`)
  }
  // A client that could write the stamp could delete or restore a row by a PUT or a POST.
  for (const name of ['createSchema', 'updateSchema', 'partialUpdateSchema'] as const) {
    const properties: Record<string, SchemaNode> | undefined = schemaStatic(klass, name)?.properties
    if (properties !== undefined && Object.hasOwn(properties, named)) {
      refuse(`its ${name} takes "${named}", the field softDelete stamps: a client could delete or restore a row by writing it; leave it out of the body`)
    }
  }
  if (deleted !== undefined) assertDeletedPermission(klass, deleted, refuse)
}

/** `softDelete.deleted` is a permission on the request, and the filter has no parameter of the same name. */
function assertDeletedPermission (klass: SoftClass, deleted: unknown, refuse: (why: string) => never): void {
  if (!(deleted instanceof Permission)) refuse('softDelete.deleted must be a permission (IsLibrarian, hasScope(...)), the principals who may read deleted rows')
  const compiled = compileAccess((deleted as Permission).node, 'GET', String(deleted))
  if (compiled.objects !== 'none') {
    refuse(`softDelete.deleted (${compiled.name}) judges objects, but it decides whether a request may ask for deleted rows at all: give it a request-level rule`)
  }
  if (klass.filter != null && Object.hasOwn(klass.filter.querySchema().properties, 'deleted')) {
    refuse('its filter has a parameter "deleted", the name of the soft delete\'s ?deleted=; rename the filter\'s')
  }
}
