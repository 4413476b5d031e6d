// Generic bulk views (views layer): the bulk actions over a bulk repository, one repository call per
// request, the hooks around it, and the action views that hold them, each family by name.
import type { FastifyRequest } from 'fastify'
import { schemaStatic } from '../../core/typebox-lines.js'
import { bulkBatches } from '../../core/channels.js'
import { actionMixin, type ActionViewClass, type ItemOf, type Ret } from '../actions/standard.js'
import type { APIView } from '../api-view.js'
import { NotFound, RequestValidationError, type ProblemErrorEntry } from '../../http/errors.js'
import { createsAsGiven, GENERIC, type CreateValues, type GenericBase, type GenericStatics } from '../generic/generic-view.js'
import { ownScope } from '../generic/view-scope.js'
import type { ActionRegistry, ViewBase } from '../mixins.js'
import {
  keyFieldsOf, type AsyncBulkRepository, type BulkRepository, type Criteria, type Precondition, type RepositoryOptions
} from '../../stores/repository.js'
import { describeKey } from '../../stores/sql/table-key.js'
import { ruleOf } from '../../access/access-rule.js'
import type { StandardAction } from '../view.js'
import { loadParent } from '../generic/parent.js'
import { judgeObject, objectPermission } from '../generic/object-permissions.js'
import { then, type Awaitable, type MaybePromise } from '../../core/maybe-promise.js'
import { ConfigurationError } from '../../core/configuration-error.js'
import { requiredOf, type SchemaNode } from '../../core/schema-node.js'
import { BULK_ACTIONS, bulkMembers, type BulkClass, type BulkStatics, type GenericBulkMembers } from './bulk-views.js'

type BulkView = APIView & GenericBulkMembers<unknown, false> & { request: FastifyRequest }

declare module './bulk-views.js' {
  interface GenericBulkMembers<M, Async> {
    /**
     * The write of a bulk create (docs/bulk.md, "Write seams"), as `performCreate` is a create's:
     * receives the items (validated, scoped, judged, after `beforeBulkCreate`) and the options, and
     * writes them in one call. Default: `repository.createMany(items, options)`.
     */
    performBulkCreate (items: Array<CreateValues<M>>, options: RepositoryOptions): Ret<Async, Array<ItemOf<M>>>
  }
}

/**
 * The library's `performBulkCreate`: the batch as it is, one `createMany`. Installed where no
 * mixin below the generic bulk ones gave one, as the hooks are (bulk-views.ts).
 */
function performBulkCreate (this: BulkView, items: Array<Record<string, unknown>>, options: RepositoryOptions) {
  return this.repository.createMany(items, options)
}

/** `fn` on a hook's or the repository's result, awaited when it is a thenable other than the view's reply. */
const onSettled = <T, R>(view: BulkView, value: Awaitable<T>, fn: (value: T) => R): MaybePromise<R> => then(
  value,
  fn,
  view.reply
)

/** The bulk actions as the generic bulk views implement them: what each does with its repository (`store`). */
export const GENERIC_BULK_ACTIONS = {
  bulkCreate: { ...BULK_ACTIONS.bulkCreate, store: { writesBody: true, sendsRows: true } },
  bulkUpdate: { ...BULK_ACTIONS.bulkUpdate, store: { writesBody: true } },
  updateMany: { ...BULK_ACTIONS.updateMany, store: { writesBody: true, sendsRows: true } },
  bulkDelete: BULK_ACTIONS.bulkDelete
} as const satisfies Record<string, StandardAction>

/** Two PUT items with one primary key would make the result depend on their order: a 400 naming each of them. */
function duplicateKeys (items: Array<Record<string, unknown>>, key: string): ProblemErrorEntry[] {
  const positions = new Map<unknown, number[]>()
  items.forEach((item, index) => {
    const list = positions.get(item[key])
    if (list === undefined) positions.set(item[key], [index])
    else list.push(index)
  })
  const pointer = (index: number): string => `#/${index}/${key}`
  const entries: Array<ProblemErrorEntry & { index: number }> = []
  for (const [value, indexes] of positions) {
    if (indexes.length < 2) continue
    for (const index of indexes) {
      const others = indexes.filter((i) => i !== index).map(pointer).join(', ')
      entries.push({ index, detail: `Duplicate primary key ${JSON.stringify(value)}, also at ${others}`, pointer: pointer(index) })
    }
  }
  return entries.sort((a, b) => a.index - b.index).map(({ index: _index, ...entry }) => entry)
}

/** The class of a generic bulk view (TypeScript types an instance's `constructor` as `Function`). */
const classOf = (view: BulkView): BulkClass => view.constructor as BulkClass

/** The criteria and positional arguments of PATCH and DELETE, options merged, the unfiltered guard applied. */
function selection (view: BulkView, action: string): { args: unknown[], kwargs: Record<string, unknown> } {
  const klass = classOf(view)
  const filter = view.getFilter(view.request)
  if (filter !== undefined && !klass.allowUnfiltered && Object.keys(filter.asKwargs()).length === 0) {
    throw new RequestValidationError('At least one filter parameter is required to select rows.')
  }
  const { args, kwargs } = view.getFilterArgs(filter, action)
  const merged = view.mergeRepositoryOptions(kwargs, action)
  // Every row the write selects is judged in its transaction (and, for a PATCH, as its values leave
  // it); one refused row writes nothing.
  const values = action === 'updateMany' ? view.request.body as Record<string, unknown> : undefined // the validated body
  const permission = objectPermission(view, action, values === undefined ? undefined : () => values)
  return { args, kwargs: permission === undefined ? merged : { ...merged, precondition: permission } }
}

// A bulk PUT's items take the view's own scope (a nested view's parent), never the permissions'
// criteria, which are no values (`owner_id__in`) and would give the row to its writer.
const withScope = (view: BulkView, items: unknown, action: string): Array<Record<string, unknown>> => {
  const extra = action === 'bulkUpdate' ? ownScope(view, action) : view.getScopeKwargs(action)
  return (items as Array<Record<string, unknown>>).map((item) => ({ ...item, ...extra }))
}

/**
 * The bulk PUT's options: each replaced row is judged by the object permission in the write's
 * transaction, as it is and as the item would leave it. The repository finds the rows by key
 * alone, so a row the permissions hide is answered as a missing one, word for word: the batch
 * tells its writer nothing of rows it may not see.
 */
function bulkUpdateOptions (view: BulkView, items: Array<Record<string, unknown>>): Record<string, unknown> {
  const options = view.getRepositoryOptions('bulkUpdate')
  const key = classOf(view).primaryKey
  const byKey = new Map(items.map((item, index) => [String(item[key]), { item, index }]))
  // The repository judges only the rows its items name, found by their key: each has its item.
  const find = (current: unknown) =>
    byKey.get(String((current as Record<string, unknown>)[key])) as { item: Record<string, unknown>, index: number }
  const permission = objectPermission(view, 'bulkUpdate', (current) => find(current).item)
  if (permission === undefined) return options
  const rule = ruleOf(view.request)
  const precondition: Precondition = (current) => {
    const found = find(current)
    if (rule !== undefined && !rule.test(current)) {
      throw new NotFound(`Item ${found.index}: no row has ${describeKey([key], found.item)}.`)
    }
    permission(current)
  }
  return { ...options, precondition }
}

/** Runs a bulk action once the nested view's parent is read (a 404 when it is missing). */
const underParent = <R>(view: BulkView, fn: () => R): MaybePromise<R> =>
  onSettled(view, loadParent(view), fn)

/** A batch's write, published on the bulk batches' channel when something listens (core/channels.ts). */
const batch = <R>(view: BulkView, action: string, items: number, write: () => R): R =>
  bulkBatches.hasSubscribers ? bulkBatches.traceSync(write, { view: classOf(view).name, action, items }) : write()

/** Generic bulk actions: one repository call per request, none for an empty batch, hooks around it. */
// Each generic bulk action is a real method of a named class (what a stack trace or a
// debugger stepping into `super.bulkCreate(request)` shows).
const bulkImpls: Record<string, (base: ViewBase) => ViewBase> = {
  bulkCreate: (Base) => class GenericBulkCreate extends Base {
    bulkCreate (this: BulkView, request: FastifyRequest): unknown {
      return underParent(this, () => {
        const data = withScope(this, request.body, 'bulkCreate')
        for (const item of data) judgeObject(this, item, 'bulkCreate')
        if (data.length === 0) return []
        return onSettled(this, this.beforeBulkCreate(data), () => onSettled(this, batch(this, 'bulkCreate', data.length,
          () => this.performBulkCreate(data, this.getRepositoryOptions('bulkCreate'))),
        (objs) => onSettled(this, this.afterBulkCreate(objs), () => objs)))
      })
    }
  },
  bulkUpdate: (Base) => class GenericBulkUpdate extends Base {
    bulkUpdate (this: BulkView, request: FastifyRequest): unknown {
      return underParent(this, () => {
        const data = withScope(this, request.body, 'bulkUpdate')
        const duplicates = duplicateKeys(data, classOf(this).primaryKey)
        if (duplicates.length > 0) throw new RequestValidationError('The request body is invalid.', { errors: duplicates })
        if (data.length === 0) return true
        return onSettled(this, this.beforeBulkUpdate(data), () => onSettled(this, batch(this, 'bulkUpdate', data.length,
          () => this.repository.bulkUpdate(data, bulkUpdateOptions(this, data))),
        () => onSettled(this, this.afterBulkUpdate(), () => true)))
      })
    }
  },
  updateMany: (Base) => class GenericUpdateMany extends Base {
    updateMany (this: BulkView, request: FastifyRequest): unknown {
      return underParent(this, () => {
        const values = request.body as Record<string, unknown>
        const { args, kwargs } = selection(this, 'updateMany')
        return onSettled(this, this.beforeUpdateMany(values), () => onSettled(this, this.repository.updateMany(
          values,
          kwargs,
          ...args
        ),
        (objs) => onSettled(this, this.afterUpdateMany(objs), () => objs)))
      })
    }
  },
  bulkDelete: (Base) => class GenericBulkDelete extends Base {
    bulkDelete (this: BulkView): unknown {
      return underParent(this, () => {
        const { args, kwargs } = selection(this, 'bulkDelete')
        return onSettled(
          this,
          this.beforeBulkDelete(),
          () => onSettled(
            this,
            this.repository.deleteMany(kwargs, ...args),
            () => onSettled(this, this.afterBulkDelete(), () => true)
          )
        )
      })
    }
  }
}

/** What each generic bulk action needs (docs/bulk.md); `filter` must be set, `null` to opt out. */
const REQUIRED: Record<string, Array<keyof BulkStatics | 'responseSchema'>> = {
  bulkCreate: ['createSchema', 'responseSchema'],
  bulkUpdate: ['bulkUpdateSchema'],
  updateMany: ['updateSchema', 'filter', 'responseSchema'],
  bulkDelete: ['filter']
}

/**
 * Whether every item `schema` accepts carries `key` (docs/bulk.md: PUT items carry their primary
 * key): an object schema listing it as required, an intersection with such a member, a union
 * of such members only.
 */
function requiresKey (schema: SchemaNode | undefined, key: string): boolean {
  if (Array.isArray(schema?.allOf)) return schema.allOf.some((member) => requiresKey(member, key))
  if (Array.isArray(schema?.anyOf)) return schema.anyOf.every((member) => requiresKey(member, key))
  return schema?.properties?.[key] !== undefined && requiredOf(schema).includes(key)
}

function genericBulkMembers (name: string) {
  return (Base: GenericBase): ViewBase => {
    const cls = class extends bulkMembers(Base) {
      static override assertRegistrable (): void {
        super.assertRegistrable()
        for (const attribute of REQUIRED[name]) {
          if (this[attribute] !== undefined) continue
          const hint = attribute === 'filter' ? ' (a filter class, or null to act on what getKwargs selects)' : ''
          throw new ConfigurationError('FV_ERR_BULK_CONFIG', `Cannot register ${this.name}: ${name} needs ${attribute}${hint}`)
        }
        const key = keyFieldsOf(this.repository) ?? []
        if (name === 'bulkUpdate' && key.length > 1) {
          throw new ConfigurationError('FV_ERR_BULK_CONFIG', `Cannot register ${this.name}: its repository's key is several fields (${key.join(', ')}), but a bulk PUT ` +
            `tells its items apart by one, primaryKey "${this.primaryKey}". Leave bulkUpdate out of the view (bulk create, PATCH and DELETE work over it), or write the PUT as an action of your own`)
        }
        if (name === 'bulkUpdate' && !requiresKey(schemaStatic(this, 'bulkUpdateSchema'), this.primaryKey)) {
          throw new ConfigurationError('FV_ERR_BULK_CONFIG', `Cannot register ${this.name}: bulkUpdateSchema must require the primary key "${this.primaryKey}" (set primaryKey to the field that identifies a PUT item)`)
        }
        // A bulk create writes its batch in one call, never through performCreate: what an override
        // of it sets (an owner, a slug) would be missing from every bulk-created row, silently.
        if (name === 'bulkCreate' && !createsAsGiven(this) && Reflect.get(this.prototype, 'performBulkCreate') === performBulkCreate) {
          throw new ConfigurationError('FV_ERR_BULK_CONFIG', `Cannot register ${this.name}: it overrides performCreate, which its bulk create does not call (the batch is one ` +
            'createMany), so what performCreate sets would be missing from bulk-created rows. Override performBulkCreate(items, options) too: ' +
            'set the same on each item, then write them in one call (this.repository.createMany(items, options))')
        }
      }

      mergeRepositoryOptions (this: BulkView, kwargs: Criteria, action: string): Record<string, unknown> {
        const options = this.getRepositoryOptions(action)
        for (const key of Object.keys(options)) {
          if (key in kwargs) throw new ConfigurationError('FV_ERR_OPTION_IS_CRITERION', `${this.constructor.name}: repository option "${key}" is also a filter criterion; override mergeRepositoryOptions to choose a precedence`)
        }
        return { ...kwargs, ...options }
      }
    }
    if (!('performBulkCreate' in cls.prototype)) {
      Object.defineProperty(cls.prototype, 'performBulkCreate', { value: performBulkCreate, writable: true, configurable: true })
    }
    return bulkImpls[name](cls)
  }
}

type Family<K> = K extends `async${string}` ? 'asyncGenericBulk' : 'genericBulk'
type BulkRepositoryOf<K> = K extends `async${string}` ? AsyncBulkRepository<unknown> : BulkRepository<unknown>
type Generic<K extends keyof ActionRegistry<unknown>> = ActionViewClass<K | Family<K>,
  BulkStatics & GenericStatics<BulkRepositoryOf<K>>>

/** POST on `bulkRoute` over `repository.createMany`. */
export const AsyncGenericBulkCreateAPIView = actionMixin<Generic<'asyncBulkCreate'>, GenericBase>('AsyncGenericBulkCreateAPIView', GENERIC_BULK_ACTIONS.bulkCreate, GENERIC, genericBulkMembers('bulkCreate'))
/** Sync counterpart of `AsyncGenericBulkCreateAPIView`. */
export const GenericBulkCreateAPIView = actionMixin<Generic<'bulkCreate'>, GenericBase>('GenericBulkCreateAPIView', GENERIC_BULK_ACTIONS.bulkCreate, GENERIC, genericBulkMembers('bulkCreate'))
/** PUT on `bulkRoute` over `repository.bulkUpdate`. */
export const AsyncGenericBulkUpdateAPIView = actionMixin<Generic<'asyncBulkUpdate'>, GenericBase>('AsyncGenericBulkUpdateAPIView', GENERIC_BULK_ACTIONS.bulkUpdate, GENERIC, genericBulkMembers('bulkUpdate'))
/** Sync counterpart of `AsyncGenericBulkUpdateAPIView`. */
export const GenericBulkUpdateAPIView = actionMixin<Generic<'bulkUpdate'>, GenericBase>('GenericBulkUpdateAPIView', GENERIC_BULK_ACTIONS.bulkUpdate, GENERIC, genericBulkMembers('bulkUpdate'))
/** PATCH on `bulkRoute` over `repository.updateMany`. */
export const AsyncGenericUpdateManyAPIView = actionMixin<Generic<'asyncUpdateMany'>, GenericBase>('AsyncGenericUpdateManyAPIView', GENERIC_BULK_ACTIONS.updateMany, GENERIC, genericBulkMembers('updateMany'))
/** Sync counterpart of `AsyncGenericUpdateManyAPIView`. */
export const GenericUpdateManyAPIView = actionMixin<Generic<'updateMany'>, GenericBase>('GenericUpdateManyAPIView', GENERIC_BULK_ACTIONS.updateMany, GENERIC, genericBulkMembers('updateMany'))
/** DELETE on `bulkRoute` over `repository.deleteMany`. */
export const AsyncGenericBulkDestroyAPIView = actionMixin<Generic<'asyncBulkDestroy'>, GenericBase>('AsyncGenericBulkDestroyAPIView', GENERIC_BULK_ACTIONS.bulkDelete, GENERIC, genericBulkMembers('bulkDelete'))
/** Sync counterpart of `AsyncGenericBulkDestroyAPIView`. */
export const GenericBulkDestroyAPIView = actionMixin<Generic<'bulkDestroy'>, GenericBase>('GenericBulkDestroyAPIView', GENERIC_BULK_ACTIONS.bulkDelete, GENERIC, genericBulkMembers('bulkDelete'))
