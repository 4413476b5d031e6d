// The `fastify-views/access` entry: who asks and what they may do. Permissions and their composition,
// the principal declared once (`PrincipalTypes`), authenticators, and throttles (docs/permissions.md,
// docs/throttles.md).
// The types entry comes with this one, so that a consumer's declaration emit can name the types of its
// view classes as `fastify-views/types` (without it: TS2742, "cannot be named without a reference to").
import './types.js'
export {
  Permission, permission, AllowAny, IsAuthenticated, ReadOnly, hasScope,
  type RuleOf, type AnonymousRule, type ScopeCriteria, type PermissionNode, type Rule
} from './access/permission.js'
export { invalidCredentials, type Authenticator, type AuthOptions, type AppAuth } from './access/authenticator.js'
export type { PrincipalTypes, Principal } from './access/principal.js'
export type { Throttle } from './access/throttle.js'
// Authenticators: one per kind of credentials, given to `configureApp(app, { auth: { authenticators } })`.
export { jwtAuth, type JwtAuthOptions } from './access/jwt.js'
export { apiKeyAuth, type ApiKeyAuthOptions } from './access/api-key.js'
