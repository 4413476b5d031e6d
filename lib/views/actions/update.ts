// The members of `update` and `partialUpdate` (views layer): their bodies, their empty answers, and
// the patch formats a partial update takes (`views/patch/`), contributed to its route once.
import { Type, type TSchema } from '@sinclair/typebox'
import { schemaStatic, type Schema } from '../../core/typebox-lines.js'
import { ConfigurationError } from '../../core/configuration-error.js'
import { defineStaticGroup } from '../../core/static-groups.js'
import { honoursPreconditions } from '../../stores/repository.js'
import { DEFAULT_PATCH_LIMITS } from '../../http/patch-budget.js'
import { defineMixin, type MixinClass, type ViewBase } from '../mixins.js'
import { extendContribution, type ActionRoute, type RouteContribution, type RouteDefinition, type StandardAction, type View } from '../view.js'
import type { WriteDescription } from '../write.js'
import { patchContribution, patchedWrite, patchMediaTypes, type PatchedView, type PatchFormat, type PatchTarget } from '../patch/patch.js'
import { withSchema, type CreateStatics, type PatchOptions, type UpdateStatics } from './standard.js'

/** Stands for `getPatchTarget` until a view implements it: action views read their objects themselves. */
function noPatchTarget (this: View): never {
  throw new ConfigurationError('FV_ERR_PATCH_TARGET', `${this.constructor.name}.getPatchTarget is not implemented: a partial update that accepts patch documents reads the object they apply to through it`)
}

/** The body of `update`: `updateSchema`, else `createSchema`. */
function updateBody (klass: ViewBase & Partial<UpdateStatics & CreateStatics>): TSchema | undefined {
  return klass.updateSchema === undefined ? schemaStatic(klass, 'createSchema') : schemaStatic(klass, 'updateSchema')
}

const ALL_PATCH_FORMATS: readonly PatchFormat[] = ['json', 'merge-patch', 'json-patch']

/** The `patch` group with each member resolved: what `PATCH.of(view)` gives. */
interface PatchLimits {
  formats: readonly PatchFormat[] | undefined
  maxOperations: number
  maxDepth: number
  maxSize: number | undefined
}

/** The `patch` group: its members' defaults, and the flat statics it replaced. */
const PATCH = defineStaticGroup<PatchLimits>('patch', {
  formats: undefined,
  maxOperations: DEFAULT_PATCH_LIMITS.maxOperations,
  maxDepth: DEFAULT_PATCH_LIMITS.maxDepth,
  maxSize: undefined
}, { patchFormats: 'formats', maxPatchOperations: 'maxOperations', maxPatchDepth: 'maxDepth', maxPatchSize: 'maxSize' })

declare module '../mixins.js' {
  interface StaticGroupRegistry { patch: PatchOptions }
  interface RetiredStaticRegistry {
    patchFormats: 'patch: { formats }'
    maxPatchOperations: 'patch: { maxOperations }'
    maxPatchDepth: 'patch: { maxDepth }'
    maxPatchSize: 'patch: { maxSize }'
  }
}

/**
 * The statics and routes of `update` and `partialUpdate`: their bodies, empty responses, and patch
 * formats. Both update mixins require it, so a view with both has it once, below them.
 */
export const UpdateMixin = defineMixin<MixinClass>('UpdateMixin', (Base) => {
  const cls = class UpdateMixin extends Base {
    static updateSchema: Schema | undefined = undefined
    static partialUpdateSchema: Schema | undefined = undefined
    static returnOnUpdate = true
    static patch: PatchOptions = {}
    /** Owned by the create mixins; the default body of `update` when `updateSchema` is unset. */
    declare static createSchema: Schema | undefined
    /** What this request's patch document was applied to, once the step before the action applied one. */
    declare patchSnapshot: PatchedView['patchSnapshot']

    // A generic view (a `repository` static) takes every format when its repository writes
    // atomically (the patch's read and write are then one step) and it has the representation
    // a patch applies to. An action view reads its objects itself, so it takes JSON unless it says otherwise.
    static acceptedPatchFormats (): readonly PatchFormat[] {
      const formats = this.patch.formats
      if (formats !== undefined) return formats
      // A patch document applies to the representation; one in an envelope is the envelope's, which no client means.
      return 'repository' in this && honoursPreconditions(this.repository) && this.responseSchema !== undefined && this.envelope === undefined ? ALL_PATCH_FORMATS : ['json']
    }

    static override getActionRoute (action: StandardAction): ActionRoute {
      const route = super.getActionRoute(action)
      if (action.name !== 'update' && action.name !== 'partialUpdate') return route
      const full = updateBody(this)
      const partial = schemaStatic(this, 'partialUpdateSchema') ?? (full === undefined ? undefined : Type.Partial(full))
      const body = action.name === 'update' ? full : partial
      const options = body === undefined ? route.options : withSchema(route.options, { body })
      // A partial update takes exactly its formats: another `+json` type is a 415, not a plain body.
      const formats = action.name === 'partialUpdate' && partial !== undefined ? patchMediaTypes(this.acceptedPatchFormats(), partial) : undefined
      return { ...route, options, emptyBody: this.returnOnUpdate === false, bodyMediaTypes: formats }
    }

    static override assertRegistrable (): void {
      super.assertRegistrable()
      const patches = this.acceptedPatchFormats().filter((f) => f !== 'json')
      if (patches.length === 0 || !this.standardActions().some((a) => a.name === 'partialUpdate')) return
      if (this.responseSchema === undefined) {
        throw new ConfigurationError('FV_ERR_PATCH_TARGET', `Cannot register ${this.name}: patch formats ${patches.join(', ')} apply to the representation responseSchema describes; set responseSchema`)
      }
      if ((this.prototype as Partial<PatchTarget>).getPatchTarget === noPatchTarget) { // the prototype of a view class with this mixin
        throw new ConfigurationError('FV_ERR_PATCH_TARGET', `Cannot register ${this.name}: patch formats ${patches.join(', ')} need the current object; implement getPatchTarget(request), or set patch = { formats: ['json'] }`)
      }
      // A repository from an instance getter is only known per request: its class answers for it.
      const repository: unknown = 'repository' in this ? this.repository : undefined
      if (repository !== undefined && !honoursPreconditions(repository)) {
        throw new ConfigurationError('FV_ERR_NOT_ATOMIC', `Cannot register ${this.name}: patch formats ${patches.join(', ')} read the object and write the change in one step, ` +
          'but its repository does not declare atomicPreconditions: true. Set patch = { formats: [\'json\'] }, or evaluate options.precondition in update ' +
          'in the same step as the write and declare it (docs/repositories.md, "Conditional writes").')
      }
    }

    // The patch formats of the partial update (Accept-Patch, patch documents applied before the action).
    static override contribute (route: RouteDefinition, method: string): RouteContribution {
      const inherited = super.contribute(route, method)
      if (route.name !== 'partialUpdate' || method !== 'PATCH' || route.options.schema?.body === undefined) return inherited
      const { maxOperations, maxDepth, maxSize } = PATCH.of(this)
      const limits = { maxOperations, maxDepth, maxSize: maxSize ?? route.bodyLimit }
      const partial = route.options.schema.body
      const own = patchContribution(this, route, this.acceptedPatchFormats(), partial, updateBody(this), limits)
      return extendContribution(inherited, own)
    }

    // A patched write also checks that the row is still the one the patch was applied to.
    override describeWrite (action: string): WriteDescription {
      return patchedWrite(this, super.describeWrite(action))
    }
  }
  // A generic view reads the target through its repository (GenericViewMixin, below).
  if (!('getPatchTarget' in cls.prototype)) Object.defineProperty(cls.prototype, 'getPatchTarget', { value: noPatchTarget, writable: true, configurable: true })
  return cls
})

/** What every update action mixin requires below it (with the detail mixin). */
export const UPDATE: MixinClass[] = [UpdateMixin]
