// Access rules (access layer): permissions compiled for one route, judged once per request into what the request may see.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { isThenable, type MaybePromise } from '../core/maybe-promise.js'
import { splitCriterion, type Criteria, type Operator } from '../stores/repository.js'
import { matches } from '../stores/value-order.js'
import type { Permission, PermissionNode, Rule } from './permission.js'
import { scopedBy } from './scope-criteria.js'

/**
 * What a request may see of a route's objects once its request-level checks passed: rows matching
 * `criteria` (`undefined` when no part of the rule can be written as criteria), and of those the
 * ones `test` passes; `exact` when the criteria say all of it (no object needs the test).
 */
export interface ObjectRule {
  readonly criteria: Criteria | undefined
  readonly exact: boolean
  readonly test: (object: unknown) => boolean
  /** The detail of the refusal of an object `test` refused: the message of the rule that refused it. */
  readonly why: (object: unknown) => string | undefined
}

/** A refusal, with the detail of the rule that refused (the first one that says something). */
export class Denied {
  readonly message: string | undefined
  constructor (message?: string) { this.message = message }
}

/** A refusal that says nothing of why (a `not()` of a rule that passed). */
const DENIED = new Denied()

/** A request's judgement: refused, allowed every object, or allowed the objects of a rule. */
export type Verdict = true | Denied | ObjectRule

type Judge = (principal: unknown, request: FastifyRequest) => MaybePromise<Verdict>

/** What a request-level check answers of anonymous or signed-in principals, known at registration. */
export type Outcome = 'allow' | 'deny' | 'depends'

/** How a permission's objects are judged: not at all, by criteria, or by a check that no criteria express. */
export type ObjectKind = 'none' | 'scope' | 'check'

/** Permissions compiled for one operation of a route (its method known). */
export interface CompiledAccess {
  /** `IsAuthenticated.and(IsOwner.or(IsLibrarian))`, for messages. */
  readonly name: string
  readonly judge: Judge
  /** Anonymous requests: always let through, always refused (401), or it depends on the request. */
  readonly anonymous: Outcome
  /** Signed-in principals, at the request level: a 403 can happen unless `allow`. */
  readonly signedIn: Outcome
  /** Whether (and how) the objects the route reads or writes are judged. */
  readonly objects: ObjectKind
  /** Whether every object rule a request may end with can be written as criteria (lists need it). */
  readonly expressible: boolean
  /** The alternatives of OAuth2 scopes a request may hold (OpenAPI `security`: one requirement each). */
  readonly scopeSets: ReadonlyArray<readonly string[]>
}

/** Permissions listed at several levels must all pass: their tree, or `undefined` for none. */
export function allOf (permissions: ReadonlyArray<Permission<never>>): PermissionNode | undefined {
  return permissions.map((one) => one.node).reduce<PermissionNode | undefined>(
    (left, right) => left === undefined ? right : { kind: 'and', left, right }, undefined)
}

/** Compiles a permission tree for a route served with `method`: what is known of it now, and its judge. */
export function compileAccess (node: PermissionNode, method: string, name: string): CompiledAccess {
  const facts = factsOf(node, method)
  return { name, judge: judgeOf(node, method), ...facts }
}

interface Facts {
  anonymous: Outcome
  signedIn: Outcome
  objects: ObjectKind
  expressible: boolean
  scopeSets: ReadonlyArray<readonly string[]>
}

/**
 * Alternatives of scopes without the redundant ones: a set that holds every scope of another asks
 * for more than it, so a client holding the other passes already (and duplicates say nothing).
 */
function fewest (sets: ReadonlyArray<readonly string[]>): Array<readonly string[]> {
  const kept: Array<readonly string[]> = []
  for (const set of [...sets].sort((a, b) => a.length - b.length)) {
    if (!kept.some((smaller) => smaller.every((scope) => set.includes(scope)))) kept.push(set)
  }
  return kept
}

const NOT: Record<Outcome, Outcome> = { allow: 'deny', deny: 'allow', depends: 'depends' }
const both = (a: Outcome, b: Outcome): Outcome => a === 'deny' || b === 'deny' ? 'deny' : a === 'allow' && b === 'allow' ? 'allow' : 'depends'
const either = (a: Outcome, b: Outcome): Outcome => a === 'allow' || b === 'allow' ? 'allow' : a === 'deny' && b === 'deny' ? 'deny' : 'depends'
const RANK: Record<ObjectKind, number> = { none: 0, scope: 1, check: 2 }
const worse = (a: ObjectKind, b: ObjectKind): ObjectKind => RANK[a] >= RANK[b] ? a : b

function factsOf (node: PermissionNode, method: string): Facts {
  switch (node.kind) {
    case 'rule': return ruleFacts(node.rule, method)
    case 'not': {
      const inner = factsOf(node.inner, method)
      // A negated object rule is a check: no criteria say "not these rows" for every store (nulls).
      const objects = inner.objects === 'none' ? 'none' : 'check'
      return { anonymous: NOT[inner.anonymous], signedIn: NOT[inner.signedIn], objects, expressible: objects === 'none', scopeSets: [[]] }
    }
    case 'and': {
      const left = factsOf(node.left, method)
      const right = factsOf(node.right, method)
      return {
        anonymous: both(left.anonymous, right.anonymous),
        signedIn: both(left.signedIn, right.signedIn),
        objects: worse(left.objects, right.objects),
        expressible: left.expressible && right.expressible,
        scopeSets: fewest(left.scopeSets.flatMap((a) => right.scopeSets.map((b) => [...new Set([...a, ...b])])))
      }
    }
    case 'or': {
      const left = factsOf(node.left, method)
      const right = factsOf(node.right, method)
      // Of two sides that both judge objects, a request may pass both: their rows are a union, which
      // criteria (a conjunction) cannot say. One side that judges none passes whole or not at all.
      const expressible = left.expressible && right.expressible && (left.objects === 'none' || right.objects === 'none')
      return {
        anonymous: either(left.anonymous, right.anonymous),
        signedIn: either(left.signedIn, right.signedIn),
        objects: expressible ? worse(left.objects, right.objects) : 'check',
        expressible,
        scopeSets: fewest([...left.scopeSets, ...right.scopeSets])
      }
    }
  }
}

function ruleFacts (rule: Rule, method: string): Facts {
  if (rule.method !== undefined) {
    const outcome = rule.method(method) ? 'allow' : 'deny'
    return { anonymous: outcome, signedIn: outcome, objects: 'none', expressible: true, scopeSets: [rule.scopes] }
  }
  const signedIn: Outcome = rule.request === undefined ? 'allow' : 'depends'
  const objects: ObjectKind = rule.scope !== undefined ? 'scope' : rule.object !== undefined ? 'check' : 'none'
  return {
    // A rule that judges anonymous requests may still refuse one of their objects: a 401 then.
    anonymous: rule.anonymous ? (objects === 'none' ? signedIn : 'depends') : 'deny',
    signedIn,
    objects,
    expressible: objects !== 'check',
    scopeSets: [rule.scopes]
  }
}

const ALLOW: Judge = () => true

// The judges below make no closure or promise while every check is synchronous (a scope, a flag
// of the principal): what a request pays for its permissions is their checks. A judge answers a
// native promise once a check answered one, and only then.

type Step = (verdict: Verdict, principal: unknown, request: FastifyRequest) => MaybePromise<Verdict>

/** `step` of the left side's verdict, now or once its promise settles. */
function afterLeft (verdict: MaybePromise<Verdict>, principal: unknown, request: FastifyRequest,
  step: Step): MaybePromise<Verdict> {
  if (verdict instanceof Promise) return verdict.then((settled) => step(settled, principal, request))
  return step(verdict, principal, request)
}

function judgeOf (node: PermissionNode, method: string): Judge {
  switch (node.kind) {
    case 'rule': return ruleJudge(node.rule, method)
    case 'not': {
      const inner = judgeOf(node.inner, method)
      return (principal, request) => {
        const verdict = inner(principal, request)
        return verdict instanceof Promise ? verdict.then(negate) : negate(verdict)
      }
    }
    case 'and': {
      const left = judgeOf(node.left, method)
      const right = judgeOf(node.right, method)
      const withRight: Step = (a, principal, request) => {
        if (a instanceof Denied) return a
        const b = right(principal, request)
        return b instanceof Promise ? b.then((settled) => andVerdict(a, settled)) : andVerdict(a, b)
      }
      return (principal, request) => afterLeft(left(principal, request), principal, request, withRight)
    }
    case 'or': {
      const left = judgeOf(node.left, method)
      const right = judgeOf(node.right, method)
      const withRight: Step = (a, principal, request) => {
        if (a === true) return a
        const b = right(principal, request)
        return b instanceof Promise ? b.then((settled) => orVerdict(a, settled)) : orVerdict(a, b)
      }
      return (principal, request) => afterLeft(left(principal, request), principal, request, withRight)
    }
  }
}

function ruleJudge (rule: Rule, method: string): Judge {
  const denied = new Denied(rule.message)
  if (rule.method !== undefined) return rule.method(method) ? ALLOW : () => denied
  const { request: check, scope, object, anonymous } = rule
  const why = (): string | undefined => rule.message
  const objects = (principal: unknown, request: FastifyRequest): Verdict => {
    if (scope !== undefined) return new ScopeRule(scope(principal, request), why)
    if (object !== undefined) {
      return { criteria: undefined, exact: false, test: (row) => object(principal, row, request), why }
    }
    return true
  }
  return (principal, request) => {
    if (principal === null && !anonymous) return denied
    if (check === undefined) return objects(principal, request)
    const ok = check(principal, request)
    if (!isThenable(ok)) return ok === true ? objects(principal, request) : denied
    return Promise.resolve(ok).then((settled) => settled === true ? objects(principal, request) : denied)
  }
}

/**
 * A rule's criteria, which say all of it, and the check of one object they imply: every criterion
 * holds of it. A class, so that a request's rule is one object and no closure; the criteria are
 * taken apart only when an object is checked (a create's), since a read needs the criteria alone.
 */
class ScopeRule implements ObjectRule {
  readonly criteria: Criteria
  readonly why: ObjectRule['why']
  #parts: Array<readonly [string, Operator, unknown]> | undefined
  constructor (criteria: Criteria, why: ObjectRule['why']) {
    this.criteria = criteria
    this.why = why
  }

  get exact (): true { return true }

  test (row: unknown): boolean {
    this.#parts ??= Object.entries(this.criteria).map(([key, value]) => [...splitCriterion(key), value] as const)
    return typeof row === 'object' && row !== null &&
      this.#parts.every(([field, op, value]) => matches(row as Record<string, unknown>, field, op, value)) // a stored row
  }
}

const negate = (verdict: Verdict): Verdict => verdict === true
  ? DENIED
  : verdict instanceof Denied
    ? true
    : { criteria: undefined, exact: false, test: (row) => !verdict.test(row), why: () => undefined }

function andVerdict (a: Verdict, b: Verdict): Verdict {
  if (a === true || b instanceof Denied) return b
  if (b === true || a instanceof Denied) return a
  // Both hold: the criteria of either narrow every read, so a row one side hides is a 404 even
  // where the other needs the test.
  const criteria = a.criteria === undefined || b.criteria === undefined
    ? a.criteria ?? b.criteria
    : scopedBy(a.criteria, b.criteria)
  return {
    criteria,
    exact: a.exact && b.exact,
    test: (row) => a.test(row) && b.test(row),
    why: (row) => a.test(row) ? b.why(row) : a.why(row)
  }
}

function orVerdict (a: Verdict, b: Verdict): Verdict {
  if (a instanceof Denied || b === true) return b
  if (b instanceof Denied || a === true) return a
  return {
    criteria: undefined,
    exact: false,
    test: (row) => a.test(row) || b.test(row),
    why: (row) => a.why(row) ?? b.why(row)
  }
}

/**
 * Where a request keeps the object rule it was judged to, for the view's reads and writes (none:
 * every object). A property, not a WeakMap entry: a map keyed by requests costs each one an
 * identity hash and an ephemeron. Decorated where the routes are (`holdsRules`), so every request
 * of the context is made with it and keeps one shape.
 */
const OBJECT_RULE = Symbol('fastify-views.objectRule')
type Judged = FastifyRequest & { [OBJECT_RULE]?: ObjectRule | undefined } // the decorated request

/** Decorates `app`'s requests with the slot of their object rule, unless they have it already. */
export function holdsRules (app: FastifyInstance): void {
  if (!app.hasRequestDecorator(OBJECT_RULE)) app.decorateRequest(OBJECT_RULE, undefined)
}

/** Records a request's object rule (`undefined`: none, over one a request it derives from holds). */
export const keepRule = (request: FastifyRequest, rule: ObjectRule | undefined): void => {
  (request as Judged)[OBJECT_RULE] = rule
}

/** The object rule a request was judged to, if its route's permissions judge objects. */
export const ruleOf = (request: FastifyRequest): ObjectRule | undefined => (request as Judged)[OBJECT_RULE]
