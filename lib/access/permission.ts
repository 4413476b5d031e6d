// Permissions (access layer): rules on the principal, the request and the object, composed with `and`, `or` and `not`.
import type { FastifyRequest } from 'fastify'
import type { MaybePromise } from '../core/maybe-promise.js'
import type { Criteria, FieldOf, Operator } from '../stores/repository.js'
import type { Principal } from './principal.js'

/** Criteria over the fields of rows `R` (`field` or `field__op`), or any criteria for rows of no known type. */
export type ScopeCriteria<R> = unknown extends R ? Criteria : { [P in FieldOf<R> | `${FieldOf<R>}__${Operator}`]?: unknown }

/**
 * What one rule judges (docs/permissions.md). `P` is what it is given as the principal: the
 * application's `Principal`, or `Principal | null` for a rule that judges anonymous requests too.
 */
export interface RuleOf<Row, P> {
  /** The rule's name in messages and the API description (`IsBorrower`). */
  name: string
  /** The request-level check (DRF's `has_permission`): `false` refuses the request before its body is read. */
  request?: (principal: P, request: FastifyRequest) => MaybePromise<boolean>
  /**
   * The object-level rule as criteria (`(member) => ({ member_id: member.id })`): a row the principal
   * may see matches them. They scope every read (lists, counts, pages, bulk selections, detail reads:
   * a row outside is a 404) and hold of what a create stores; the object check is read from them.
   */
  scope?: (principal: P, request: FastifyRequest) => ScopeCriteria<Row>
  /**
   * The object-level check (DRF's `has_object_permission`) when it cannot be written as criteria:
   * run on each object a detail action reads or writes (a 403), in the write's atomic step.
   * Synchronous: it runs inside the write's transaction. A list refuses such a rule (registration).
   */
  object?: (principal: P, object: Row, request: FastifyRequest) => boolean
  /** OAuth2 scopes the rule requires, documented in the operation's `security` (`hasScope` sets them). */
  scopes?: readonly string[]
  /** The detail of the 403 the rule answers. */
  message?: string
}

/** A rule as the compiler reads it: its parts, and what only its route's method decides. */
export interface Rule {
  name: string
  /** The rule judges anonymous requests itself; otherwise an anonymous request fails it (a 401). */
  anonymous: boolean
  request?: (principal: unknown, request: FastifyRequest) => MaybePromise<boolean>
  scope?: (principal: unknown, request: FastifyRequest) => Criteria
  object?: (principal: unknown, object: unknown, request: FastifyRequest) => boolean
  /** Decided by the route's method alone, at registration (`ReadOnly`). */
  method?: (method: string) => boolean
  scopes: readonly string[]
  message?: string
}

/** A permission's tree: rules, and how they compose. */
export type PermissionNode =
  | { readonly kind: 'rule', readonly rule: Rule }
  | { readonly kind: 'and' | 'or', readonly left: PermissionNode, readonly right: PermissionNode }
  | { readonly kind: 'not', readonly inner: PermissionNode }

/**
 * A permission over rows `Row` (DRF's permission classes): made by `permission(...)` or one of the
 * library's (`IsAuthenticated`, `AllowAny`, `ReadOnly`, `hasScope`), composed with `and`, `or`
 * and `not`, listed in a view's `permissions` (all must pass), its `actionPermissions`, a router's
 * or a registration's. A permission over `Member` rows is refused where the rows are `Loan`s.
 */
export class Permission<Row = unknown> {
  /** Phantom: makes a permission contravariant in its rows, so one over other rows does not fit. */
  declare readonly rowType?: (row: Row) => void
  readonly node: PermissionNode

  constructor (node: PermissionNode) { this.node = node }

  /** Both must pass (DRF's `&`). */
  and<R> (other: Permission<R>): Permission<Row & R> {
    return new Permission({ kind: 'and', left: this.node, right: other.node })
  }

  /** Either may pass (DRF's `|`): for an object, the one whose request-level check passed. */
  or<R> (other: Permission<R>): Permission<Row & R> {
    return new Permission({ kind: 'or', left: this.node, right: other.node })
  }

  /** Passes where this fails (DRF's `~`). */
  not (): Permission<Row> {
    return new Permission({ kind: 'not', inner: this.node })
  }

  /** `IsOwner.or(IsLibrarian)`: the rule names, as messages and the API description show them. */
  toString (): string { return describe(this.node) }
}

function describe (node: PermissionNode): string {
  switch (node.kind) {
    case 'rule': return node.rule.name
    case 'not': return `${describe(node.inner)}.not()`
    default: return `${describe(node.left)}.${node.kind}(${describe(node.right)})`
  }
}

/** Options of `permission` for a rule that judges anonymous requests too: its functions get `Principal | null`. */
export interface AnonymousRule<Row, P = Principal> extends RuleOf<Row, P | null> {
  /** The rule judges anonymous requests itself (else an anonymous request fails it with a 401). */
  anonymous: true
}

/**
 * A permission of the application's: a request-level check, an object-level rule as criteria
 * (`scope`) or as a check (`object`), or several. Its functions are given the principal, never
 * `null`: an anonymous request fails it (a 401), unless it says `anonymous: true`.
 *
 * ```ts
 * const IsLibrarian = permission({ name: 'IsLibrarian', request: (member) => member.librarian })
 * const IsBorrower = permission<Loan>({ name: 'IsBorrower', scope: (member) => ({ member_id: member.id }) })
 * ```
 *
 * `P` is the application's `Principal`; a module that serves principals of its own (a test, one of
 * several applications in a process) names them: `permission<Loan, Reader>(...)`.
 */
export function permission<Row = unknown, P = Principal> (rule: AnonymousRule<Row, P>): Permission<Row>
export function permission<Row = unknown, P = Principal> (rule: RuleOf<Row, P>): Permission<Row>
export function permission<Row, P> (rule: RuleOf<Row, P> | AnonymousRule<Row, P>): Permission<Row> {
  return fromRule({ ...rule, anonymous: 'anonymous' in rule && rule.anonymous, scopes: rule.scopes ?? [] } as Rule) // the rule's functions take a narrower principal and row than `Rule` states: the compiler calls each only with what it declared
}

const fromRule = <Row>(rule: Rule): Permission<Row> => new Permission<Row>({ kind: 'rule', rule })

/** Everyone, signed in or not (DRF's `AllowAny`). */
export const AllowAny: Permission = fromRule({ name: 'AllowAny', anonymous: true, scopes: [] })

/** Signed-in principals only: an anonymous request is a 401 (DRF's `IsAuthenticated`). */
export const IsAuthenticated: Permission = fromRule({ name: 'IsAuthenticated', anonymous: false, scopes: [] })

/** Methods that only read (RFC 9110 §9.2.1). */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Reads only: the safe methods (RFC 9110 §9.2.1) pass, every write fails; decided per route at
 * registration. `IsAuthenticated.or(ReadOnly)` is DRF's `IsAuthenticatedOrReadOnly`.
 */
export const ReadOnly: Permission = fromRule({
  name: 'ReadOnly',
  anonymous: true,
  method: (method) => SAFE_METHODS.has(method),
  scopes: [],
  message: 'This resource is read-only.'
})

/**
 * The principal was granted every one of `scopes` (OAuth2, RFC 6749 §3.3), as its authenticator
 * reports them (`scopesOf`); documented as the scopes of the operation's security requirement.
 */
export function hasScope (...scopes: string[]): Permission {
  return fromRule({
    name: `hasScope(${scopes.join(', ')})`,
    anonymous: false,
    scopes,
    message: `This needs the scope${scopes.length === 1 ? '' : 's'} ${scopes.join(', ')}.`,
    request: (principal, request) => {
      const granted = grantedScopes(principal, request)
      return scopes.every((scope) => granted.includes(scope))
    }
  })
}

/** Where `hasScope` reads the scopes the request's authenticator granted (access-check.ts sets it). */
export const GRANTED_SCOPES = new WeakMap<FastifyRequest, readonly string[]>()
const grantedScopes = (_principal: unknown, request: FastifyRequest): readonly string[] =>
  GRANTED_SCOPES.get(request) ?? []
