// The hook phases of a view route (routes layer): Fastify's lifecycle in order, and who goes first in
// each, as a table, the way Fastify's own hooks.js keeps its phases as data.

/** A Fastify phase a view route may have hooks in. */
export type Phase = 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend'

/** The phases a view's mixins add hooks to (`RouteContribution`). */
export type ContributedPhase = 'onRequest' | 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend'

/**
 * Who brings the hooks of a phase: the route's dependencies, the library's checks of its content
 * (media types), the hooks the route's options list (decorator, registration, router), and the
 * view's mixins (`contribute`): their checks of the request's preconditions, then the rest.
 */
export type HookSource = 'dependencies' | 'content' | 'options' | 'preconditions' | 'view'

/** One phase: its hooks' sources in the order they run. */
export interface PhaseRule {
  readonly phase: Phase
  readonly sources: readonly HookSource[]
}

/**
 * Every phase a view route gives Fastify hooks in, in lifecycle order. The route's access checks
 * (the view's `onRequest`: authentication, permissions, throttles) come before all else; then,
 * before the handler, dependencies come first and a mixin's checks last, after every hook that
 * could refuse the request more cheaply (a precondition reads the store); of those, preconditions
 * first, before anything looks at the content (RFC 9110 §13.2.1). After the handler, the view's
 * own hooks come first, so that a 304 is decided before a hook of the application sees the payload.
 */
export const PHASES: readonly PhaseRule[] = [
  { phase: 'onRequest', sources: ['view', 'dependencies', 'options'] },
  { phase: 'preParsing', sources: ['content', 'options'] },
  { phase: 'preValidation', sources: ['dependencies', 'options', 'preconditions', 'view'] },
  { phase: 'preHandler', sources: ['dependencies', 'options', 'view'] },
  { phase: 'preSerialization', sources: ['view', 'options'] },
  { phase: 'onSend', sources: ['view', 'options'] }
]
