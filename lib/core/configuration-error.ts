/**
 * The mistakes the library refuses, each with a stable code (in the manner of Fastify's
 * `FST_ERR_...`): a test or a tool can match the code while the message, which names the
 * user's class and member, says what to change.
 */
export const CONFIGURATION_ERRORS = {
  /** A standard action of the view is left unimplemented (an abstract view). */
  FV_ERR_ABSTRACT_VIEW: 'FV_ERR_ABSTRACT_VIEW',
  /** An action was called that its view does not implement. */
  FV_ERR_NOT_IMPLEMENTED: 'FV_ERR_NOT_IMPLEMENTED',
  /** A method has `@Override` or `@Throws` but no route decorator and is not a standard action. */
  FV_ERR_NO_ROUTE: 'FV_ERR_NO_ROUTE',
  /** A route decorator is applied to something other than a public instance method. */
  FV_ERR_DECORATOR_TARGET: 'FV_ERR_DECORATOR_TARGET',
  /** `@Catch(Type)` has neither a `raises` entry nor its own status and detail. */
  FV_ERR_CATCH_UNMAPPED: 'FV_ERR_CATCH_UNMAPPED',
  /** An entry of `raises` is not a pair of an exception class and a detail or `{ status, detail }`. */
  FV_ERR_RAISES: 'FV_ERR_RAISES',
  /** A view that sends stored objects has no response schema to send them with. */
  FV_ERR_NO_RESPONSE_SCHEMA: 'FV_ERR_NO_RESPONSE_SCHEMA',
  /** `actionDependencies` names an action the view does not have, or `objectPermissionActions` one that acts on no named object. */
  FV_ERR_UNKNOWN_ACTION: 'FV_ERR_UNKNOWN_ACTION',
  /** A generic view has no repository. */
  FV_ERR_NO_REPOSITORY: 'FV_ERR_NO_REPOSITORY',
  /** A view checks If-Match but its repository cannot check it in the same step as the write. */
  FV_ERR_NOT_ATOMIC: 'FV_ERR_NOT_ATOMIC',
  /** A nested view's prefix parameters disagree with the prefix it is registered under, or its parent lookup reads none of them. */
  FV_ERR_PREFIX_PARAMS: 'FV_ERR_PREFIX_PARAMS',
  /** A view's envelope wraps the representation that patch documents it accepts would apply to, or a route asks for an envelope its view does not have. */
  FV_ERR_ENVELOPE: 'FV_ERR_ENVELOPE',
  /** An error format is malformed (a validation status other than 400 or 422, no body or schema), or the application is configured with two. */
  FV_ERR_ERROR_FORMAT: 'FV_ERR_ERROR_FORMAT',
  /** A view mixes in `ConditionalMixin` but turns on neither `etag` nor `conditionalRequests`: it would do nothing. */
  FV_ERR_CONDITIONAL_OFF: 'FV_ERR_CONDITIONAL_OFF',
  /** A view's `versionField` without `etag`, or over a repository that does not keep its version in that field. */
  FV_ERR_VERSION_FIELD: 'FV_ERR_VERSION_FIELD',
  /** A soft-delete view whose field its repository does not have or a body takes, an action its scope cannot reach, or a `deleted` permission that judges objects. */
  FV_ERR_SOFT_DELETE: 'FV_ERR_SOFT_DELETE',
  /** A view with sparse fieldsets whose read sends no object schema, whose list page holds no array of them, or whose filter takes `fields` or `omit`. */
  FV_ERR_SPARSE_FIELDS: 'FV_ERR_SPARSE_FIELDS',
  /** A relation of `expand` that would not hold: no generic view, a nested one, a pair of fields its repositories lack, a bound out of range, or a view registered nowhere. */
  FV_ERR_EXPAND: 'FV_ERR_EXPAND',
  /** A partial update takes patch documents but has no way to read the object they apply to. */
  FV_ERR_PATCH_TARGET: 'FV_ERR_PATCH_TARGET',
  /** A bulk view lacks an attribute its actions need, or its PUT schema does not require the key. */
  FV_ERR_BULK_CONFIG: 'FV_ERR_BULK_CONFIG',
  /** A repository option has the name of a filter criterion: which one wins is the view's choice. */
  FV_ERR_OPTION_IS_CRITERION: 'FV_ERR_OPTION_IS_CRITERION',
  /** A view names a field its item does not have (a filter's field over a repository's columns, a `lastModifiedField` outside the response schema), or one of the wrong kind (a `lastModifiedField` that holds no time). */
  FV_ERR_UNKNOWN_FIELD: 'FV_ERR_UNKNOWN_FIELD',
  /** A filter's operator names a field the filter does not declare, or a filter parameter or search field cannot match what the field holds. */
  FV_ERR_FILTER_FIELD: 'FV_ERR_FILTER_FIELD',
  /** `composeFilters` was given filters that paginate in different ways. */
  FV_ERR_FILTER_PAGINATION: 'FV_ERR_FILTER_PAGINATION',
  /** A filter sets a `defaultPageSize` larger than its `maxPageSize`: pages would silently be shorter. */
  FV_ERR_PAGE_SIZE: 'FV_ERR_PAGE_SIZE',
  /** `mix()` was given something that is not a mixin. */
  FV_ERR_NOT_A_MIXIN: 'FV_ERR_NOT_A_MIXIN',
  /** `.with(statics, methods)` named a static or a method the class does not have. */
  FV_ERR_UNKNOWN_STATIC: 'FV_ERR_UNKNOWN_STATIC',
  /** A schema the library cannot check: no TypeBox type, a 0.34 kind without a `TypeRegistry` entry, or a `typebox` 1.x feature JSON Schema cannot say (`Type.Refine`, `Type.Codec`, `Type.Unsafe`, `Type.Cyclic`). */
  FV_ERR_UNSUPPORTED_SCHEMA: 'FV_ERR_UNSUPPORTED_SCHEMA',
  /** A member of a view class is near one it inherits (`getKwarg` for `getKwargs`, `unsafeDependency`): it would replace nothing. */
  FV_ERR_MISSPELT_MEMBER: 'FV_ERR_MISSPELT_MEMBER',
  /** The application was given two authentications, or one with no authenticator. */
  FV_ERR_AUTH: 'FV_ERR_AUTH',
  /** A permission that cannot do what its route needs: an object rule on a view that reads no objects, a rule no criteria express on a list, a principal required where the application authenticates nobody. */
  FV_ERR_PERMISSION: 'FV_ERR_PERMISSION',
  /** A throttle that cannot count: a scope or rate that is malformed, one scope given two rates, or an application without @fastify/rate-limit. */
  FV_ERR_THROTTLE: 'FV_ERR_THROTTLE',
  /** A static that a group of statics replaced (`etag`, now `conditional: { etag }`): set the group's member instead. */
  FV_ERR_RENAMED_STATIC: 'FV_ERR_RENAMED_STATIC',
  /** A view's response schema does not describe every row of its table: a column that may be NULL, or of another type, than the schema says. */
  FV_ERR_SCHEMA_COLUMNS: 'FV_ERR_SCHEMA_COLUMNS',
  /** A route answers 204 No Content but declares or would send a body, which would be dropped. */
  FV_ERR_NO_CONTENT_BODY: 'FV_ERR_NO_CONTENT_BODY',
  /** A view with standard actions was registered with no prefix, in a context without one: its actions would be served at the root. */
  FV_ERR_NO_PREFIX: 'FV_ERR_NO_PREFIX',
  /** A view's route is already served by another view (or another route of the application). */
  FV_ERR_SHARED_ROUTE: 'FV_ERR_SHARED_ROUTE',
  /** Routes were added before the plugin installed the problem+json handlers, or `configureApp: false` left the application with Fastify's. */
  FV_ERR_CONFIGURE_FIRST: 'FV_ERR_CONFIGURE_FIRST',
  /** An entry of the plugin's `views` option is not a view, an entry object or a router. */
  FV_ERR_VIEW_ENTRY: 'FV_ERR_VIEW_ENTRY',
  /** Two different schemas are documented under one component name. */
  FV_ERR_COMPONENT_CLASH: 'FV_ERR_COMPONENT_CLASH',
  /** A SQL repository was given a name that is not a plain identifier, or not one of its columns. */
  FV_ERR_SQL_NAME: 'FV_ERR_SQL_NAME',
  /** A repository's relation is declared wrongly, or a criterion names a relation (or a field of one) the repository does not have. */
  FV_ERR_RELATION: 'FV_ERR_RELATION',
  /** A SQL repository was given an option it cannot use (a `lockTimeout` that is not a non-negative number of milliseconds). */
  FV_ERR_SQL_OPTION: 'FV_ERR_SQL_OPTION',
  /** A SQL repository was given a positional criterion that is not a `{ sql, params }` fragment. */
  FV_ERR_SQL_FRAGMENT: 'FV_ERR_SQL_FRAGMENT',
  /** A SQL repository was given a LIMIT or OFFSET that is not a whole, non-negative row count. */
  FV_ERR_SQL_ROW_COUNT: 'FV_ERR_SQL_ROW_COUNT',
  /** A validation policy option the library does not know or a value it does not take, or a request schema's `default` that its own schema refuses. */
  FV_ERR_VALIDATION_POLICY: 'FV_ERR_VALIDATION_POLICY',
  /** A route's content options do not fit: an `unexpectedContent` other than `'ignore'` or `'refuse'`, or an optional body on a standard action. */
  FV_ERR_ROUTE_CONTENT: 'FV_ERR_ROUTE_CONTENT',
  /** A route's `deprecation` gives a date that is no date. */
  FV_ERR_DEPRECATION: 'FV_ERR_DEPRECATION',
  /** A cache option that cannot work: no store, a misspelt action, a resource two names, an answer shared that is a principal's. */
  FV_ERR_CACHE: 'FV_ERR_CACHE',
  /** An event-stream route (`Events`) or a streamed list that cannot work: no events, a name with a line break, a limit that is not a whole number in range. */
  FV_ERR_STREAM: 'FV_ERR_STREAM',
  /** A telemetry that is not one (no `observe`), a second telemetry for an application, or a telemetry option it does not take. */
  FV_ERR_TELEMETRY: 'FV_ERR_TELEMETRY'
} as const

/** One configuration error code. */
export type ConfigurationErrorCode = keyof typeof CONFIGURATION_ERRORS

/**
 * A mistake in a view, a mixin, a repository or the plugin's options, found at
 * registration (or, for what only a request reveals, when it is first met). A
 * `TypeError`, as JavaScript reports a value of the wrong shape, with a `code`.
 */
export class ConfigurationError extends TypeError {
  /** Which mistake: one of `CONFIGURATION_ERRORS`. */
  readonly code: ConfigurationErrorCode

  constructor (code: ConfigurationErrorCode, message: string) {
    super(message)
    this.code = code
  }
}
