// The `fastify-views/errors` entry: the API errors (`APIError` and one class per status), the error
// formats (problem+json by default) with their handlers and schemas, and the configuration errors.
export * from './http/errors.js'
export { ConfigurationError, CONFIGURATION_ERRORS, type ConfigurationErrorCode } from './core/configuration-error.js'
export {
  ErrorFormat, problemFormat, PROBLEM_FORMAT, problemErrorHandler, problemNotFoundHandler, problemClientErrorHandler,
  problemFrameworkErrors,
  type ErrorFormatOptions, type ValidationStatus
} from './http/error-format.js'
export { PROBLEM_CONTENT_TYPE } from './http/problem.js'
export { ResponseValidationError } from './schema/response-check.js'
export { errors, ProblemSchema, ValidationProblemSchema } from './openapi/operation.js'
export { errorClassSchema, ProblemErrorEntrySchema } from './http/problem-schema.js'
