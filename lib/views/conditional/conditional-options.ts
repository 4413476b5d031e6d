// The options of conditional requests (views layer): `static conditional = { etag, requests,
// lastModifiedField, versionField, require }`, one group of statics, and the flat names it replaced.
import { defineStaticGroup } from '../../core/static-groups.js'

/** What `ConditionalMixin` does for a view (docs/conditional.md), set as `static conditional = { etag: true }`. */
export interface ConditionalOptions {
  /** Hash every 2xx GET/HEAD body into a strong ETag and answer 304 when the client's copy is current. */
  etag?: boolean
  /** Document validators, 304 and 412 for hand-rolled validators (`checkEtag`, `checkLastModified`). */
  requests?: boolean
  /** The field holding an object's modification time, for `Last-Modified` of generic views' preconditions. */
  lastModifiedField?: string | undefined
  /**
   * An integer field the view's repository changes on every update (its `versionField` or
   * `versionColumn`): ETags are made from it instead of hashing each body, and a write whose
   * `If-Match` names one is compared in the write itself, one `UPDATE ... AND version = ?`.
   */
  versionField?: string | undefined
  /**
   * Refuse an unsafe detail request whose `If-Match` names no strong ETag with 428 Precondition
   * Required (RFC 6585 §3), so that no client can overwrite a version it did not read.
   */
  require?: boolean
}

/**
 * The `conditional` group. Every default is off (false or unset), so a member read straight from
 * the static, where a request needs it, is the member's value: only registration resolves the group.
 */
export const CONDITIONAL = defineStaticGroup<ConditionalOptions>('conditional', {
  etag: false,
  requests: false,
  lastModifiedField: undefined,
  versionField: undefined,
  require: false
}, { etag: 'etag', conditionalRequests: 'requests', lastModifiedField: 'lastModifiedField', versionField: 'versionField', requirePreconditions: 'require' })

declare module '../mixins.js' {
  interface StaticGroupRegistry { conditional: ConditionalOptions }
  interface RetiredStaticRegistry {
    etag: 'conditional: { etag }'
    conditionalRequests: 'conditional: { requests }'
    lastModifiedField: 'conditional: { lastModifiedField }'
    versionField: 'conditional: { versionField }'
    requirePreconditions: 'conditional: { require }'
  }
}
