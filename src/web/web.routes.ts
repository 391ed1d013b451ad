import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { translator } from '../i18n/i18n.ts'
import type { Language } from '../i18n/languages.ts'
import type { Clock } from '../lib/clock.ts'
import { ERROR_RESPONSES } from '../lib/error-schema.ts'
import type { ApiError } from '../lib/errors.ts'
import { viewEtag } from '../lib/etag.ts'
import { hashApiKey } from '../lib/ids.ts'
import type { RenderCache, Rendered } from '../lib/render-cache.ts'
import { PRIVATE_LINK_HEADERS, PUBLIC_VIEW_CACHE_CONTROL } from '../lib/response-headers.ts'
import { NOT_MODIFIED, NoBody } from '../lib/schema.ts'
import type { ServiceDeps } from '../modules/service-deps.ts'
import { InvitationTokenParamsSchema } from '../modules/statuses/invitations.schemas.ts'
import { acceptLink, previewLink } from '../modules/statuses/invitations.service.ts'
import { shareBadge, sharePage } from '../modules/statuses/share.service.ts'
import {
  linkBadge,
  linkPage,
  ShareLinkTokenParamsSchema,
} from '../modules/statuses/share-links.service.ts'
import { ShareIdParamsSchema } from '../modules/statuses/sharing.schemas.ts'
import { authenticateSession, SESSION_COOKIE } from '../modules/users/sessions.service.ts'
import { prepareError, sendError } from '../plugins/error-handler.ts'
import { BadgeQuerySchema, badgeEndpoint, badgeText, greyBadge, renderBadge } from './badge.ts'
import { renderInvitePage } from './invite-page.ts'
import { sendPageAsset } from './page-assets.ts'
import { PageQuerySchema, pageLanguage, VARY_LANGUAGE } from './page-language.ts'
import { ASSET_URLS, ASSETS } from './share-assets.ts'
import { renderMessagePage, renderSharePage } from './share-page.ts'

/** Entries of history shown on the page (the API pages through the rest). */
const PAGE_HISTORY = 20
const PAGE_USERS = 50

// note: strict: scripts, styles and connections only from this origin, no inline anything,
// no plugins, no forms. Framing is allowed on purpose: status pages are put on dashboards,
// and the page has nothing to click that acts for the viewer.
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'"
// an SVG opened on its own must not run anything either
const BADGE_CSP = "default-src 'none'; style-src 'unsafe-inline'"

/** A documented response that is not JSON (for the OpenAPI document only: nothing serializes it). */
const page = (type: string, description: string) => ({
  description,
  content: { [type]: { schema: Type.String() } },
})

/** The errors of a badge (SVG): each a grey badge saying what is wrong, never a broken image. */
const svgBadgeErrors = (missing: string) => ({
  400: page(
    'image/svg+xml',
    'A grey "status | invalid style" (or "invalid label") badge: `style` or `label` is not allowed',
  ),
  404: page('image/svg+xml', `A grey "status | not found" badge: ${missing}`),
  429: page(
    'image/svg+xml',
    'A grey "status | error" badge: too many anonymous requests from this address this minute; `Retry-After`',
  ),
  503: page('image/svg+xml', 'A grey "status | unavailable" badge; `Retry-After: 5`'),
})

/** A badge in shields.io's endpoint format (https://shields.io/badges/endpoint-badge). */
const BadgeEndpointSchema = Type.Object(
  {
    schemaVersion: Type.Literal(1),
    label: Type.String({ description: "The status's name, or the `label` asked for" }),
    message: Type.String({
      description: 'The value (`—` when none); `<value> · stale` when stale',
    }),
    color: Type.String({
      description: 'The status colour (docs/api.md#colour-palette); slate when stale',
    }),
    labelColor: Type.String(),
    style: Type.Optional(Type.String({ description: 'The `style` asked for, if any' })),
    cacheSeconds: Type.Integer({ description: 'How long shields.io may keep it: its shortest' }),
  },
  {
    $id: 'BadgeEndpoint',
    additionalProperties: false,
    description: "A badge in shields.io's endpoint format",
    examples: [
      {
        schemaVersion: 1,
        label: 'Meeting room 4',
        message: 'OCCUPIED',
        color: '#b91c1c',
        labelColor: '#555555',
        cacheSeconds: 300,
      },
    ],
  },
)

/**
 * A view rendered for the cache (docs/sharing.md#caching-of-public-views): its text, its ETag
 * and every header of its 200, `headers` (its route's) with the ETag and `Cache-Control` of a
 * view any cache may keep and revalidates, made once here rather than on every hit.
 */
const renderedView = (
  statusId: string,
  shareId: string,
  version: number,
  body: string,
  headers: Readonly<Record<string, string>>,
): { owner: string; rendered: Rendered } => {
  const etag = viewEtag(shareId, version, body)
  return {
    owner: statusId,
    rendered: {
      body,
      etag,
      headers: { ...headers, etag, 'cache-control': PUBLIC_VIEW_CACHE_CONTROL },
    },
  }
}

/** The endpoint badge's own header (the rest are the view's). */
const ENDPOINT_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const

/** Sends a view from the render cache: 200, its headers and text as rendered. */
const sendView = (reply: FastifyReply, view: Rendered): FastifyReply =>
  reply.code(200).headers(view.headers).send(view.body)

/** The headers of every HTML answer of these pages (`sendHtml`), before its own. */
const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': PAGE_CSP,
  'x-content-type-options': 'nosniff',
  // links in descriptions must not learn the share URL
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
  // in the language `?lang=` or the browser's Accept-Language chose (page-language.ts)
  ...VARY_LANGUAGE,
} as const

function sendHtml(
  reply: FastifyReply,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply
    .code(status)
    .headers({ ...HTML_HEADERS, ...headers })
    .send(body)
}

const notFoundPage = (lang: Language) =>
  renderMessagePage(
    lang,
    ASSET_URLS,
    translator(lang)('page.share.notFound'),
    translator(lang)('page.share.notFoundText'),
  )

/** The headers of every SVG badge (`sendBadge`), before its own. */
const BADGE_HEADERS = {
  'content-type': 'image/svg+xml; charset=utf-8',
  'content-security-policy': BADGE_CSP,
  'x-content-type-options': 'nosniff',
  // an error badge: README renderers and image proxies ask again every time
  'cache-control': 'no-cache, max-age=0',
} as const

function sendBadge(
  reply: FastifyReply,
  status: number,
  svg: string | Buffer,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply
    .code(status)
    .headers({ ...BADGE_HEADERS, ...headers })
    .send(svg)
}

const linkNotFoundPage = (lang: Language) =>
  renderMessagePage(
    lang,
    ASSET_URLS,
    translator(lang)('page.share.linkNotFound'),
    translator(lang)('page.share.linkNotFoundText'),
  )

/** Whether a URL as requested is the share page's or its badge's: errors in HTML or SVG. */
export const isWebUrl = (url: string): boolean => url.startsWith('/s/') || isLinkUrl(url)

/** A private share link's page or badge: never cached, no referrer, even in error. */
const isLinkUrl = (url: string): boolean => url.startsWith('/l/')

/** What a grey error badge says: the problem, in a word or two. */
function badgeProblem(apiError: ApiError): string {
  if (apiError.statusCode === 404) return 'not found'
  if (apiError.statusCode === 503) return 'unavailable'
  // a mistake in the badge's URL, where its author looks: "invalid style"
  const field = apiError.errors?.[0]?.field
  if (apiError.statusCode === 400 && (field === 'style' || field === 'label'))
    return `invalid ${field}`
  return 'error'
}

/**
 * An error of the share page or badge, as a page or a badge (the endpoint badge's, JSON in
 * the error shape of the API). Also for errors raised before routing (a malformed URL) on
 * their paths, hence the URL's own path when there is no route.
 */
export async function sendWebError(err: Error, request: FastifyRequest, reply: FastifyReply) {
  const path = request.routeOptions.url ?? request.url.split('?')[0] ?? ''
  const link = isLinkUrl(path)
  const headers = link ? PRIVATE_LINK_HEADERS : {}
  if (path.endsWith('/badge.json')) {
    // asked again every time, as the error badges are
    reply.headers({ 'cache-control': 'no-cache, max-age=0', ...headers })
    return sendError(err, request, reply)
  }
  const apiError = prepareError(err, request, reply, 'share page failed')
  // an image where an image was asked for: a README shows a badge, not a broken picture
  if (path.endsWith('/badge.svg'))
    return sendBadge(reply, apiError.statusCode, await greyBadge(badgeProblem(apiError)), headers)
  const lang = pageLanguage(request)
  if (apiError.statusCode === 404)
    return sendHtml(reply, 404, link ? linkNotFoundPage(lang) : notFoundPage(lang), headers)
  return sendHtml(
    reply,
    apiError.statusCode,
    renderMessagePage(lang, ASSET_URLS, translator(lang)('page.common.error'), apiError.message),
    headers,
  )
}

/**
 * The share page `GET /s/:shareId`, its badge and assets: public, outside the API-key scope,
 * with their own HTML not-found and error pages (never a JSON body).
 */
export const webRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  /** Where links point (og:url): PUBLIC_URL, or the address the server listens on. */
  linkBase: () => string
  /** The rendered pages and badges, until their status changes (docs/sharing.md#caching-of-public-views). */
  rendered: RenderCache
}> = async (app, { deps, linkBase, rendered }) => {
  app.setNotFoundHandler((request, reply) =>
    sendHtml(reply, 404, notFoundPage(pageLanguage(request))),
  )
  app.setErrorHandler(sendWebError)

  app.get(
    '/assets/:name',
    { schema: { hide: true, params: Type.Object({ name: Type.String() }) } },
    async (request, reply) => {
      const found = Object.hasOwn(ASSETS, request.params.name)
        ? ASSETS[request.params.name]
        : undefined
      if (!found) return sendHtml(reply, 404, notFoundPage(pageLanguage(request)))
      return sendPageAsset(request, reply, found)
    },
  )

  app.get(
    '/:shareId',
    {
      config: { auth: 'none', anonymousLimit: true, conditional: true },
      schema: {
        operationId: 'getSharePage',
        summary: 'Share page of a public status (HTML, updates live)',
        tags: ['public'],
        params: ShareIdParamsSchema,
        querystring: PageQuerySchema,
        response: {
          200: page('text/html', 'The share page'),
          304: NOT_MODIFIED,
          400: page(
            'text/html',
            'A share id no status can have (a NUL character): a page saying so',
          ),
          404: page('text/html', 'No public status here: unknown, deleted or private'),
          429: page(
            'text/html',
            'Too many anonymous requests from this address this minute; `Retry-After`',
          ),
          503: page('text/html', 'Storage cannot answer now; `Retry-After: 5`'),
        },
      },
    },
    (request, reply) => {
      const lang = pageLanguage(request)
      return rendered.serve(
        `page\0${request.params.shareId}\0${lang}`,
        async () => {
          // an unknown or private share id throws 404: the error handler answers the not-found page
          const page = await sharePage(deps, request.params.shareId, {
            history: PAGE_HISTORY,
            users: PAGE_USERS,
          })
          const { shareId } = page.view
          const body = renderSharePage({
            ...page,
            assets: ASSET_URLS,
            lang,
            eventsUrl: `/v1/share/${shareId}/events`,
            historyUrl: `/v1/share/${shareId}/history?limit=${PAGE_HISTORY}`,
            kind: { share: { url: `${linkBase()}/s/${shareId}` } },
          })
          // the ETag covers the history and people shown too (lib/etag.ts)
          return renderedView(page.statusId, shareId, page.version, body, HTML_HEADERS)
        },
        (view) => sendView(reply, view),
      )
    },
  )

  app.get(
    '/:shareId/badge.svg',
    {
      config: { auth: 'none', anonymousLimit: true, conditional: true },
      schema: {
        operationId: 'getBadge',
        summary: 'README badge "name | value" of a public status (SVG, shields.io styles)',
        tags: ['public'],
        params: ShareIdParamsSchema,
        querystring: BadgeQuerySchema,
        response: {
          200: page('image/svg+xml', 'The badge'),
          304: NOT_MODIFIED,
          ...svgBadgeErrors('unknown, deleted or private'),
        },
      },
    },
    (request, reply) => {
      const { shareId } = request.params
      const { label, style } = request.query
      const key = `svg\0${shareId}\0${style ?? ''}\0${label ?? ''}`
      const render = async () => {
        // an unknown or private share id throws 404: the error handler answers the grey badge
        const badge = await shareBadge(deps, shareId)
        const svg = await renderBadge(badgeText(badge, label), style)
        return renderedView(badge.statusId, shareId, badge.version, svg, BADGE_HEADERS)
      }
      return rendered.serve(key, render, (view) => sendView(reply, view))
    },
  )

  app.get(
    '/:shareId/badge.json',
    {
      config: { auth: 'none', anonymousLimit: true, conditional: true },
      schema: {
        operationId: 'getBadgeEndpoint',
        summary: "The badge of a public status in shields.io's endpoint format (JSON)",
        description:
          "For `https://img.shields.io/endpoint?url=<this URL>`: the text and colour of the SVG badge, with `style` when asked for. Errors are the API's error body.",
        tags: ['public'],
        params: ShareIdParamsSchema,
        querystring: BadgeQuerySchema,
        response: {
          200: BadgeEndpointSchema,
          304: NOT_MODIFIED,
          ...ERROR_RESPONSES,
        },
      },
    },
    (request, reply) => {
      const { shareId } = request.params
      const { label, style } = request.query
      const key = `badge.json\0${shareId}\0${style ?? ''}\0${label ?? ''}`
      const render = async () => {
        const badge = await shareBadge(deps, shareId)
        const body = JSON.stringify(badgeEndpoint(badgeText(badge, label), style))
        return renderedView(badge.statusId, shareId, badge.version, body, ENDPOINT_HEADERS)
      }
      return rendered.serve(key, render, (view) => sendView(reply as FastifyReply, view))
    },
  )
}

/**
 * The page an invitation link opens, `GET /invite/:token` (docs/accounts.md#invitation-links):
 * what the link offers and how to take it up; its own pages for a link unknown (404) or no
 * longer usable (410). Never cached, and its URL (a secret) is sent to no other site. Someone
 * signed in answers it on the page: its form posts to `POST /invite/:token`.
 */
export const invitePageRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  clock: Clock
}> = async (app, { deps, clock }) => {
  // note: the page's own form may post here, and nowhere else; and it is never framed (a
  // framed Accept button could be clicked for someone: clickjacking)
  const pageHeaders = {
    'cache-control': 'no-store',
    'content-security-policy': PAGE_CSP.replace(
      "form-action 'none'",
      "form-action 'self'; frame-ancestors 'none'",
    ),
  }
  // the page's form posts as browsers do; what it sends is not read
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 1024 },
    (_request, _body, done) => done(null, {}),
  )
  app.setNotFoundHandler((request, reply) =>
    sendHtml(reply, 404, invitationNotFoundPage(pageLanguage(request)), pageHeaders),
  )
  app.setErrorHandler((err: Error, request, reply) => {
    const apiError = prepareError(err, request, reply, 'invitation page failed')
    const lang = pageLanguage(request)
    const t = translator(lang)
    const body =
      apiError.statusCode === 404
        ? invitationNotFoundPage(lang)
        : apiError.statusCode === 410
          ? renderMessagePage(
              lang,
              ASSET_URLS,
              t('page.invite.gone'),
              t('page.invite.goneText', { reason: apiError.message }),
            )
          : apiError.statusCode === 401
            ? renderMessagePage(
                lang,
                ASSET_URLS,
                t('page.invite.signInAgain'),
                t('page.invite.signInAgainText'),
              )
            : renderMessagePage(lang, ASSET_URLS, t('page.invite.notAccepted'), apiError.message)
    return sendHtml(reply, apiError.statusCode, body, pageHeaders)
  })

  /** The name of whoever the request's session cookie signs in, if it is a session that works. */
  const signedInName = async (request: FastifyRequest): Promise<string | null> => {
    const token = request.cookies?.[SESSION_COOKIE]
    // a real session token is 44 characters: anything far longer is not worth hashing
    if (token === undefined || token === '' || token.length > 256) return null
    const found = await authenticateSession(deps.db, hashApiKey(token), clock)
    return found?.user.name ?? null
  }

  app.get(
    '/:token',
    {
      config: { auth: 'none', anonymousLimit: true },
      schema: {
        operationId: 'getInvitePage',
        summary: 'The page an invitation link opens (HTML): what it offers, how to accept it',
        description:
          'Signed out: links to sign up or sign in. Signed in (session cookie): Accept, a form post to `POST /invite/{token}`.',
        tags: ['public'],
        params: InvitationTokenParamsSchema,
        querystring: PageQuerySchema,
        response: {
          200: page('text/html', 'The invitation page'),
          404: page('text/html', 'No invitation has this token'),
          410: page('text/html', 'The invitation has expired, been used up or been revoked'),
          429: page(
            'text/html',
            'Too many anonymous requests from this address this minute; `Retry-After`',
          ),
          503: page('text/html', 'Storage cannot answer now; `Retry-After: 5`'),
        },
      },
    },
    async (request, reply) => {
      const { token } = request.params
      const invitation = await previewLink(deps, token, clock.now())
      const body = renderInvitePage(
        pageLanguage(request),
        ASSET_URLS,
        invitation,
        token,
        await signedInName(request),
      )
      return sendHtml(reply, 200, body, pageHeaders)
    },
  )

  app.post(
    '/:token',
    {
      // the session's own request from the page (a cookie's POST must come from this origin)
      config: { auth: 'authenticated', scope: 'status:manage' },
      schema: {
        operationId: 'acceptInvitePage',
        summary: "The invitation page's Accept button (HTML form post): accept the invitation",
        description:
          "As `POST /v1/invitations/{token}/accept`, answered for a browser: 303 to the status's screen in the app, or a page saying why not.",
        tags: ['public'],
        params: InvitationTokenParamsSchema,
        response: {
          303: NoBody("Accepted: `Location` is the status's screen in the app"),
          401: page('text/html', 'Not signed in, or the session has ended'),
          403: page(
            'text/html',
            'Sent from another site, the link is bound to another e-mail address, or an API key without `status:manage` (`insufficientScope`)',
          ),
          404: page('text/html', 'No invitation has this token'),
          409: page('text/html', 'Your own status'),
          410: page('text/html', 'The invitation has expired, been used up or been revoked'),
        },
      },
    },
    async (request, reply) => {
      const { statusId } = await acceptLink(deps, request.caller, request.params.token, clock.now())
      return reply
        .code(303)
        .headers({
          location: `/statuses/${encodeURIComponent(statusId)}`,
          'cache-control': 'no-store',
        })
        .send()
    },
  )
}

const invitationNotFoundPage = (lang: Language) =>
  renderMessagePage(
    lang,
    ASSET_URLS,
    translator(lang)('page.invite.notFound'),
    translator(lang)('page.invite.notFoundText'),
  )

/**
 * A private share link's page `GET /l/:token` and badge (docs/accounts.md#private-share-links):
 * as the share page and badge, for whoever holds the link, whatever the status's accessType.
 * Never cached anywhere but the holder's browser, and the token never leaves in a Referer.
 */
export const linkWebRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (
  app,
  { deps },
) => {
  app.setNotFoundHandler((request, reply) =>
    sendHtml(reply, 404, linkNotFoundPage(pageLanguage(request)), PRIVATE_LINK_HEADERS),
  )
  app.setErrorHandler(sendWebError)
  const config = { auth: 'none', anonymousLimit: true } as const

  app.get(
    '/:token',
    {
      config,
      schema: {
        operationId: 'getLinkPage',
        summary: 'Page of the status a private share link shows (HTML, updates live)',
        tags: ['share links'],
        params: ShareLinkTokenParamsSchema,
        querystring: PageQuerySchema,
        response: {
          200: page('text/html', 'The page'),
          404: page('text/html', 'The link does not work: forged, revoked or expired'),
          429: page(
            'text/html',
            'Too many anonymous requests from this address this minute; `Retry-After`',
          ),
          503: page('text/html', 'Storage cannot answer now; `Retry-After: 5`'),
        },
      },
    },
    async (request, reply) => {
      const { token } = request.params
      const page = await linkPage(deps, token, { history: PAGE_HISTORY, users: PAGE_USERS })
      const body = renderSharePage({
        ...page,
        assets: ASSET_URLS,
        lang: pageLanguage(request),
        eventsUrl: `/v1/share-links/${token}/events`,
        historyUrl: `/v1/share-links/${token}/history?limit=${PAGE_HISTORY}`,
        kind: { link: true },
      })
      return sendHtml(reply, 200, body, PRIVATE_LINK_HEADERS)
    },
  )

  app.get(
    '/:token/badge.svg',
    {
      config,
      schema: {
        operationId: 'getLinkBadge',
        summary:
          'Badge "name | value" of the status a private share link shows (SVG, shields.io styles)',
        tags: ['share links'],
        params: ShareLinkTokenParamsSchema,
        querystring: BadgeQuerySchema,
        response: {
          200: page('image/svg+xml', 'The badge'),
          ...svgBadgeErrors('forged, revoked or expired'),
        },
      },
    },
    async (request, reply) => {
      const badge = await linkBadge(deps, request.params.token)
      const svg = await renderBadge(badgeText(badge, request.query.label), request.query.style)
      return sendBadge(reply, 200, svg, PRIVATE_LINK_HEADERS)
    },
  )
}
