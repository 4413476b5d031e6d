// The generic actions (views layer): the CRUD actions over a generic view's repository, each a real
// method of a named class, and the action views that hold them, each family (async, sync) by name.
import { keyFieldsOf, type AsyncRepository, type Criteria, type Repository, type RepositoryOptions } from '../../stores/repository.js'
import { then, type Awaitable } from '../../core/maybe-promise.js'
import { Conflict } from '../../http/errors.js'
import type { ActionRegistry, ViewBase } from '../mixins.js'
import type { StandardAction } from '../view.js'
import { onePrecondition, type WriteDescription } from '../write.js'
import { actionMixin, DETAIL, STANDARD_ACTIONS, type ActionViewClass, type CreateStatics, type DetailStatics, type ListStatics, type UpdateStatics } from '../actions/standard.js'
import { createMembers } from '../actions/list-create.js'
import { UPDATE } from '../actions/update.js'
import { genericListClass } from './generic-list.js'
import { loadParent } from './parent.js'
import { judgeObject } from './object-permissions.js'
import { GENERIC, type GenericBase, type GenericRequest, type GenericStatics, type GenericView } from './generic-view.js'
import { withKwargs } from './view-scope.js'

/**
 * The standard actions as the generic views implement them: what each does with its repository
 * (`store`), which registration holds their schemas to unless the view names the action in
 * `mappingActions`, whoever implements it.
 */
export const GENERIC_ACTIONS = {
  list: { ...STANDARD_ACTIONS.list, store: { sendsRows: true } },
  create: { ...STANDARD_ACTIONS.create, store: { writesBody: true, sendsRows: true } },
  retrieve: { ...STANDARD_ACTIONS.retrieve, store: { sendsRows: true } },
  update: { ...STANDARD_ACTIONS.update, store: { writesBody: true, sendsRows: true } },
  partialUpdate: { ...STANDARD_ACTIONS.partialUpdate, store: { writesBody: true, sendsRows: true } },
  destroy: STANDARD_ACTIONS.destroy
} as const satisfies Record<string, StandardAction>

/**
 * The library's own writes of one object, which compare a stored version in their write through
 * `describeWrite` (ConditionalMixin's `versionField`): an action of the view's own that replaces
 * one may not, so only these skip the read before a conditional write (docs/conditional.md).
 */
const VERSION_COMPARERS = new WeakSet<object>()

/** Whether a view class's `action` is the library's own write, which compares a stored version in its write. */
export const comparesVersion = (klass: { prototype: object }, action: string): boolean =>
  VERSION_COMPARERS.has(Reflect.get(klass.prototype, action) as object) // a method of the prototype, or nothing

/**
 * A detail route changes at most the one object it names. Criteria that do not name the
 * repository's key (a `slug` column without a unique constraint, a `getKwargs` of yours) may select
 * several rows, of which a write of "the" object would change an arbitrary one (the library's
 * stores write the first by key) or every one (a store whose `update` is a plain `UPDATE ... WHERE`):
 * those criteria are read first, two rows at most, and two are a 409 with nothing written. Criteria
 * with a value for every field of the key (`/:id`, the usual case) select one row at most: no read.
 */
function oneObject (view: GenericView, criteria: Criteria, options: RepositoryOptions): Awaitable<void> {
  const key = keyFieldsOf(view.repository) ?? ['id'] // a store that declares no key is taken to have `id`, as a bulk PUT's primaryKey
  if (key.every((field) => criteria[field] !== undefined)) return undefined
  return then(view.repository.list(criteria, { orderBy: [], limit: 2 }, options), (rows) => {
    if (rows.length > 1) throw new Conflict('More than one object matches this path; nothing was changed.')
  })
}

/**
 * A detail write as its description says: the criteria, selecting one object at most, the
 * preconditions as one `options.precondition` evaluated in the write's atomic step, the row the
 * request read before it (if any), and the answer to a write that changed nothing.
 */
function detailWrite (view: GenericView, action: string,
  write: (criteria: Criteria, options: RepositoryOptions, current: unknown) => unknown): unknown {
  return then(loadParent(view), () => {
    const described: WriteDescription = view.describeWrite(action)
    const options = view.getRepositoryOptions(action)
    const precondition = onePrecondition(described)
    return then(oneObject(view, described.criteria, options), () => then(
      write(described.criteria, precondition === undefined ? options : { ...options, precondition }, described.current),
      (written) => written ?? described.miss()
    ))
  })
}

// Each generic action is a real method of a named class, so a stack trace or a debugger
// stepping into `super.partialUpdate(request)` lands in `GenericPartialUpdate.partialUpdate`.
// The list is in generic-list.ts, with the pages of its filter's pagination.
const listImpl = <B extends GenericBase>(Base: B): ViewBase => genericListClass(Base)

const createImpl = (Base: GenericBase): ViewBase => class GenericCreate extends createMembers(Base) {
  create (this: GenericView, request: GenericRequest): unknown {
    return then(loadParent(this), () => {
      const values = withKwargs(request.body, this.getScopeKwargs('create'))
      judgeObject(this, values, 'create')
      return this.performCreate(values, this.getRepositoryOptions('create'))
    })
  }
}

const retrieveImpl = (Base: GenericBase): ViewBase => class GenericRetrieve extends Base {
  retrieve (this: GenericView): unknown {
    return this.getObject('retrieve')
  }
}

const updateImpl = (Base: GenericBase): ViewBase => {
  const cls = class GenericUpdate extends Base {
    update (this: GenericView, request: GenericRequest): unknown {
      return detailWrite(this, 'update', (criteria, options, current) => this.performUpdate(criteria, request.body, options, current))
    }
  }
  VERSION_COMPARERS.add(cls.prototype.update)
  return cls
}

const partialUpdateImpl = (Base: GenericBase): ViewBase => {
  const cls = class GenericPartialUpdate extends Base {
    // The body holds only what the client sent (or what its patch changed), so a partial update
    // changes only those fields.
    partialUpdate (this: GenericView, request: GenericRequest): unknown {
      return detailWrite(this, 'partialUpdate', (criteria, options, current) => this.performUpdate(criteria, request.body, options, current))
    }
  }
  VERSION_COMPARERS.add(cls.prototype.partialUpdate)
  return cls
}

const destroyImpl = (Base: GenericBase): ViewBase => {
  const cls = class GenericDestroy extends Base {
    destroy (this: GenericView): unknown {
      return detailWrite(this, 'destroy', (criteria, options, current) => then(this.performDestroy(criteria, options, current), (deleted) => deleted ? true : null))
    }
  }
  VERSION_COMPARERS.add(cls.prototype.destroy)
  return cls
}

type Family<K> = K extends `async${string}` ? 'asyncGeneric' : 'generic'
type RepositoryOf<K> = K extends `async${string}` ? AsyncRepository<unknown> : Repository<unknown>
type G<K extends keyof ActionRegistry<unknown>, S> = ActionViewClass<K | Family<K>, GenericStatics<RepositoryOf<K>> & S>
type Detail<K extends keyof ActionRegistry<unknown>, S = unknown> = ActionViewClass<K | Family<K> | 'detail', GenericStatics<RepositoryOf<K>> & DetailStatics & S>
type Updates = UpdateStatics & Pick<CreateStatics, 'createSchema'>

/** GET on the prefix over `repository.list` (and `count` for numbered and offset pages), filtered by `filter`. */
export const AsyncGenericListAPIView = actionMixin<G<'asyncList', ListStatics>, GenericBase>('AsyncGenericListAPIView', GENERIC_ACTIONS.list, GENERIC, listImpl)
/** Sync counterpart of `AsyncGenericListAPIView`. */
export const GenericListAPIView = actionMixin<G<'list', ListStatics>, GenericBase>('GenericListAPIView', GENERIC_ACTIONS.list, GENERIC, listImpl)
/** POST on the prefix over `repository.create` (`getKwargs('create')` merged into the values); `null` is a 409. */
export const AsyncGenericCreateAPIView = actionMixin<G<'asyncCreate', CreateStatics>, GenericBase>('AsyncGenericCreateAPIView', GENERIC_ACTIONS.create, GENERIC, createImpl)
/** Sync counterpart of `AsyncGenericCreateAPIView`. */
export const GenericCreateAPIView = actionMixin<G<'create', CreateStatics>, GenericBase>('GenericCreateAPIView', GENERIC_ACTIONS.create, GENERIC, createImpl)
/** GET on the detail route over `repository.get`. */
export const AsyncGenericRetrieveAPIView = actionMixin<Detail<'asyncRetrieve'>, GenericBase>('AsyncGenericRetrieveAPIView', GENERIC_ACTIONS.retrieve, [...GENERIC, ...DETAIL], retrieveImpl)
/** Sync counterpart of `AsyncGenericRetrieveAPIView`. */
export const GenericRetrieveAPIView = actionMixin<Detail<'retrieve'>, GenericBase>('GenericRetrieveAPIView', GENERIC_ACTIONS.retrieve, [...GENERIC, ...DETAIL], retrieveImpl)
/** PUT on the detail route over `repository.update`. */
export const AsyncGenericUpdateAPIView = actionMixin<Detail<'asyncUpdate', Updates>, GenericBase>('AsyncGenericUpdateAPIView', GENERIC_ACTIONS.update, [...UPDATE, ...GENERIC, ...DETAIL], updateImpl)
/** Sync counterpart of `AsyncGenericUpdateAPIView`. */
export const GenericUpdateAPIView = actionMixin<Detail<'update', Updates>, GenericBase>('GenericUpdateAPIView', GENERIC_ACTIONS.update, [...UPDATE, ...GENERIC, ...DETAIL], updateImpl)
/** PATCH on the detail route over `repository.update` with only the fields sent. */
export const AsyncGenericPartialUpdateAPIView = actionMixin<Detail<'asyncPartialUpdate', Updates>, GenericBase>('AsyncGenericPartialUpdateAPIView', GENERIC_ACTIONS.partialUpdate, [...UPDATE, ...GENERIC, ...DETAIL], partialUpdateImpl)
/** Sync counterpart of `AsyncGenericPartialUpdateAPIView`. */
export const GenericPartialUpdateAPIView = actionMixin<Detail<'partialUpdate', Updates>, GenericBase>('GenericPartialUpdateAPIView', GENERIC_ACTIONS.partialUpdate, [...UPDATE, ...GENERIC, ...DETAIL], partialUpdateImpl)
/** DELETE on the detail route over `repository.delete`; nothing deleted is a 404. */
export const AsyncGenericDestroyAPIView = actionMixin<Detail<'asyncDestroy'>, GenericBase>('AsyncGenericDestroyAPIView', GENERIC_ACTIONS.destroy, [...GENERIC, ...DETAIL], destroyImpl)
/** Sync counterpart of `AsyncGenericDestroyAPIView`. */
export const GenericDestroyAPIView = actionMixin<Detail<'destroy'>, GenericBase>('GenericDestroyAPIView', GENERIC_ACTIONS.destroy, [...GENERIC, ...DETAIL], destroyImpl)
