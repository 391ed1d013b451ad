import type { Scope } from '../modules/keys/scopes.ts'
import type { AuthLevel } from '../modules/users/users.service.ts'

/**
 * What a route declares about itself, in its `config`. Each fact is read by the plugin that
 * acts on it and by the OpenAPI document, so the two cannot drift apart, and no list of paths
 * kept elsewhere has to be remembered when a route is added.
 */
export interface RouteFacts {
  /**
   * Who may call (docs/api.md#authentication): a level of user, whose API key is checked
   * (`verified` by default in the /v1 scope: `requireApiKey`), or `none` for what anyone may
   * read. Read by `authenticate` (auth.ts) and the document (`security`).
   */
  auth?: AuthLevel | 'none'
  /**
   * The scope an API key needs for this route (docs/accounts.md#scoped-keys); a key without
   * it gets 403 `insufficientScope`. Sessions hold every scope. Read by `authenticate`
   * (auth.ts) and the document.
   */
  scope?: Scope
  /**
   * Only an operator may call (docs/operations.md#operators): the caller's user must be an
   * admin, else 403 `forbidden`; a key also needs the scope `admin` (declare it as `scope`).
   * Read by `enforceScopes` (auth.ts).
   */
  admin?: true
  /**
   * Honours `Idempotency-Key` (docs/api.md#safe-retries-idempotency-key). Read by
   * `idempotencyHooks` (idempotency.ts) and the document's parameters and headers.
   */
  idempotent?: true
  /**
   * A single-status resource with an ETag (docs/api.md#conditional-requests-etag-if-match):
   * a GET answers 304 to a matching If-None-Match, a write takes If-Match / If-None-Match.
   * Read by `conditionalRequests` (conditional-requests.ts) and the document.
   */
  conditional?: true
  /**
   * A request a browser says comes from another site is refused (403 `csrfRejected`), even
   * without a session (docs/accounts.md#signing-in: no one is signed in to an account of
   * someone else's making). Read by `authenticate` (auth.ts).
   */
  refuseCrossSite?: true
  /**
   * Makes a lasting credential (an API key, a passkey) or reaches other people (a channel, an
   * invitation, a share link): with SMTP set, an account whose address is neither confirmed
   * nor vouched for gets 403 `emailNotVerified` (docs/accounts.md#e-mail: whoever signed up
   * with someone else's address gets nothing that outlives the owner's proof). Read by
   * `authenticate` (auth.ts).
   */
  provenEmail?: true
  /** Its 201 names what it created in `Location`. Read by the document. */
  located?: true
  /**
   * An anonymous view of public data (docs/sharing.md#public-views-no-api-key): any
   * origin may read it, and it is always revalidated. Read by `publicViews` (public-views.ts)
   * and the document (`Access-Control-Allow-Origin`).
   */
  publicView?: true
  /**
   * Any origin may read it, without credentials (`Access-Control-Allow-Origin: *`): the
   * views of a private share link, whose token is the credential (docs/sharing.md#embeds).
   * The route sends the header itself; read by the document.
   */
  anyOrigin?: true
  /**
   * An anonymous route that counts against the per-address limit of anonymous requests
   * (`ANON_REQUESTS_PER_MINUTE`, docs/api.md#rate-limits). Read by `anonymousLimit`
   * (anonymous-limit.ts) and the document (the rate-limit headers).
   */
  anonymousLimit?: true
  /**
   * Every property of its body is optional, so no body at all means `{}`. Read by
   * `optionalBodies` (json-body.ts) and the document (its requestBody is not `required`).
   */
  bodyOptional?: true
}

declare module 'fastify' {
  // note: the facts are the config's own properties, typed once here
  interface FastifyContextConfig extends RouteFacts {}
}
