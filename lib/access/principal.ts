// The principal (access layer): who is asking, typed once for the whole application by declaration merging.
import type { FastifyRequest } from 'fastify'

/**
 * Declares the application's principal type once (docs/permissions.md, "The principal"):
 *
 * ```ts
 * declare module 'fastify-views/access' { interface PrincipalTypes { principal: Member } }
 * ```
 *
 * Every permission, `request.principal` and a view's `this.principal` are then typed by it.
 */
export interface PrincipalTypes {}

/** The application's principal, as `PrincipalTypes` declares it; `unknown` until it does. */
export type Principal = PrincipalTypes extends { principal: infer P } ? P : unknown

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Who is asking, as the application's authenticators resolved it (`configureApp(app, { auth })`);
     * `null` for an anonymous request, `undefined` on an application without authentication.
     */
    principal?: Principal | null
  }
}

/** The principal of a request: `null` when anonymous, or when the application authenticates nobody. */
export const principalOf = (request: FastifyRequest): Principal | null => request.principal ?? null
