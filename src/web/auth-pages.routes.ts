import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { translator } from '../i18n/i18n.ts'
import type { Language } from '../i18n/languages.ts'
import { ApiError } from '../lib/errors.ts'
import { html, type SafeHtml } from '../lib/html.ts'
import { NoBody } from '../lib/schema.ts'
import type { AccountMail } from '../modules/accounts/account-mail.service.ts'
import { setSessionCookie } from '../modules/accounts/session-cookie.ts'
import { PASSWORD_LENGTHS } from '../modules/users/passwords.ts'
import { prepareError } from '../plugins/error-handler.ts'
import { PageQuerySchema, pageLanguage, VARY_LANGUAGE } from './page-language.ts'
import { AUTH_PAGE_ASSET_URLS } from './share-assets.ts'

// The pages e-mailed and printed links open (docs/accounts.md#e-mail): `/auth/verify/<token>`,
// `/auth/reset/<token>`, `/auth/link/<token>`, `/auth/channel/<token>` (docs/notifications.md#e-mail).
// Opening one changes nothing (mail scanners and link previews fetch links): it shows a
// button, and the button's form post does the work, through the same service as the JSON
// routes. Plain HTML, no script; styled by the share page's stylesheet and a small one of
// their own (web/assets/auth.css), served by the service.

// note: no script, no inline style; forms post to this origin only; never framed (a framed
// button could be clicked for someone, clickjacking)
export const AUTH_PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// note: `same-origin`, never `no-referrer`: under `no-referrer` browsers send the form's post
// with `Origin: null`, which the cross-site check refuses, so the button never worked
// (docs/security.md). The token in the URL still goes to no other site: the pages link and
// load nothing from elsewhere, and a same-origin policy sends no Referer across origins.
const AUTH_PAGE_REFERRER_POLICY = 'same-origin'

/** A form post's body: small (a password of 256 characters, percent-encoded, fits). */
const FORM_BODY_LIMIT = 8 * 1024

const TokenParamsSchema = Type.Object({ token: Type.String({ maxLength: 200 }) })

/** A documented HTML answer (for the OpenAPI document only: nothing serializes it). */
const htmlPage = (description: string) => ({
  description,
  content: { 'text/html': { schema: Type.String() } },
})

function page(lang: Language, title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="color-scheme" content="light dark">
<title>${title} · statusd</title>
<link rel="icon" href="${AUTH_PAGE_ASSET_URLS.icon}" type="image/svg+xml">
${AUTH_PAGE_ASSET_URLS.stylesheets.map(
  (href) => html`<link rel="stylesheet" href="${href}">
`,
)}</head>
<body>
<main>
<p class="brand"><img src="${AUTH_PAGE_ASSET_URLS.icon}" alt=""> statusd</p>
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.value
}

/** Sends a page in the request's language (web/page-language.ts). */
function sendPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  title: string,
  body: SafeHtml,
) {
  return reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': AUTH_PAGE_CSP,
      'referrer-policy': AUTH_PAGE_REFERRER_POLICY,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      ...VARY_LANGUAGE,
    })
    .send(page(pageLanguage(request), title, body))
}

/** The texts of the request's page. */
const textsFor = (request: FastifyRequest) => translator(pageLanguage(request))

const unknownLink = (request: FastifyRequest, reply: FastifyReply) => {
  const t = textsFor(request)
  return sendPage(
    request,
    reply,
    404,
    t('page.auth.unknown'),
    html`<p>${t('page.auth.unknownText')}</p>`,
  )
}

const goneLink = (request: FastifyRequest, reply: FastifyReply) => {
  const t = textsFor(request)
  return sendPage(request, reply, 410, t('page.auth.gone'), html`<p>${t('page.auth.goneText')}</p>`)
}

/** Where a browser goes once signed in: the service's front page. */
const home = (publicUrl: string | null) => `${publicUrl ?? ''}/`

/**
 * The form of the reset page, with what was wrong with the last try if anything (the
 * password rules' own words, which are English as the API's are).
 */
const resetForm = (t: ReturnType<typeof translator>, problem?: string) => html`<form method="post">
<p><label for="password">${t('page.auth.passwordLabel')}</label><br>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_LENGTHS.minLength}" maxlength="${PASSWORD_LENGTHS.maxLength}"${problem ? html` aria-invalid="true" aria-describedby="problem"` : ''}></p>
${problem ? html`<p id="problem" class="problem" role="alert">${t('page.auth.passwordProblem', { problem })}</p>` : ''}
<p class="hint">${t('page.auth.passwordHint', { min: PASSWORD_LENGTHS.minLength, max: PASSWORD_LENGTHS.maxLength })}</p>
<p><button type="submit">${t('page.auth.resetButton')}</button></p>
</form>`

/** What the page of a notification channel's confirmation link needs (docs/notifications.md#e-mail). */
export interface ChannelConfirmationPages {
  state(token: string): Promise<string>
  /** Confirms the channel; 404/410 as the other links. */
  confirm(token: string): Promise<{ address: string }>
}

export interface AuthPageOptions {
  mail: AccountMail
  publicUrl: string | null
  channels: ChannelConfirmationPages
}

/**
 * The pages under `/auth/` (registered with that prefix, web.plugin.ts): outside the API, anonymous
 * (the token is the credential), counted per client address.
 */
export const authPageRoutes: FastifyPluginAsyncTypebox<AuthPageOptions> = async (
  app,
  { mail, publicUrl, channels },
) => {
  // the pages' forms post as browsers do, urlencoded; only here
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  )
  // every error a page, never a JSON body
  app.setErrorHandler((err: Error, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = prepareError(err, request, reply, 'auth page failed')
    if (apiError.statusCode === 404) return unknownLink(request, reply)
    if (apiError.statusCode === 410) return goneLink(request, reply)
    const t = textsFor(request)
    const crossSite = apiError.errorCode === 'csrfRejected'
    const titles: Record<number, string> = {
      // the other 403: an account an operator disabled (docs/operations.md#operators)
      403: crossSite ? t('page.auth.crossSite') : t('page.auth.disabled'),
      409: t('page.auth.addressTaken'),
      429: t('page.auth.tooMany'),
    }
    // the cross-site refusal's own message speaks of API requests signed in by cookie; here
    // it is a page's button, and a person reads it
    const text = crossSite ? t('page.auth.crossSiteText') : apiError.message
    return sendPage(
      request,
      reply,
      apiError.statusCode,
      titles[apiError.statusCode] ?? t('page.auth.error'),
      html`<p>${text}</p>`,
    )
  })

  // note: opening a link from a mail client is a cross-site navigation, so the pages' GET
  // takes any origin; the forms' POST only its own (no one signs you in by their page)
  const open = { anonymousLimit: true } as const
  const act = { anonymousLimit: true, refuseCrossSite: true } as const
  const tags = ['accounts']
  const landingSchema = (operationId: string, summary: string) => ({
    operationId,
    summary,
    description:
      'The page an e-mailed or printed link opens (HTML): it changes nothing, and shows a button that does (a form post to the same URL). An unknown link: 404; a used or expired one: 410.',
    tags,
    params: TokenParamsSchema,
    querystring: PageQuerySchema,
    response: {
      200: htmlPage('The page, with its button'),
      404: htmlPage('Not a link this service made'),
      410: htmlPage('A link used already, or expired'),
      429: htmlPage('Too many requests from this address'),
    },
  })
  const actionSchema = (operationId: string, summary: string, ok: Record<number, unknown>) => ({
    operationId,
    summary,
    description:
      "The form post of the link's page (`application/x-www-form-urlencoded`), answered with a page. Refused (403) when the browser says it comes from another site.",
    tags,
    params: TokenParamsSchema,
    querystring: PageQuerySchema,
    response: {
      ...ok,
      403: htmlPage('Sent from another site, or the account is disabled'),
      404: htmlPage('Not a link this service made'),
      410: htmlPage('A link used already, or expired'),
      429: htmlPage('Too many requests from this address'),
    },
  })
  const signedIn = {
    303: NoBody(
      "Signed in: the `statusd_session` cookie is set and the browser goes to the service's front page (`Location`)",
    ),
  }
  const client = (request: FastifyRequest) => ({
    userAgent: request.headers['user-agent'],
    ip: request.ip,
  })

  /** The GET of a link: a page with the button when it can work, else why not. */
  async function landing(
    request: FastifyRequest,
    reply: FastifyReply,
    state: string,
    title: string,
    body: SafeHtml,
  ): Promise<FastifyReply> {
    if (state === 'unknown') return unknownLink(request, reply)
    if (state !== 'valid') return goneLink(request, reply)
    return sendPage(request, reply, 200, title, body)
  }

  app.get(
    '/verify/:token',
    {
      config: open,
      schema: landingSchema('emailVerificationPage', 'Page of an e-mail verification link'),
    },
    async (request, reply) => {
      const t = textsFor(request)
      return landing(
        request,
        reply,
        await mail.linkState('verify-email', request.params.token),
        t('page.auth.verify'),
        html`<form method="post"><p><button type="submit">${t('page.auth.verifyButton')}</button></p></form>`,
      )
    },
  )

  app.post(
    '/verify/:token',
    {
      config: act,
      schema: actionSchema('emailVerificationPagePost', "Confirm the address (the page's button)", {
        200: htmlPage('Confirmed'),
        409: htmlPage('Another account took the address meanwhile'),
      }),
    },
    async (request, reply) => {
      const { user, token } = await mail.verifyEmail(request.params.token, {
        userAgent: request.headers['user-agent'],
        ip: request.ip,
      })
      // the proof may have ended the sessions the account had: this browser stays signed in
      setSessionCookie(reply, token, publicUrl)
      const t = textsFor(request)
      return sendPage(
        request,
        reply,
        200,
        t('page.auth.addressConfirmed'),
        html`<p>${t('page.auth.addressConfirmedText', { email: user.email })}</p>
<p><a class="button" href="${home(publicUrl)}">${t('page.auth.continue')}</a></p>`,
      )
    },
  )

  app.get(
    '/channel/:token',
    {
      config: open,
      schema: landingSchema(
        'channelConfirmationPage',
        "Page of a notification channel's confirmation link",
      ),
    },
    async (request, reply) => {
      const t = textsFor(request)
      return landing(
        request,
        reply,
        await channels.state(request.params.token),
        t('page.auth.channelConfirm'),
        html`<p>${t('page.auth.channelConfirmText')}</p>
<form method="post"><p><button type="submit">${t('page.auth.channelConfirmButton')}</button></p></form>`,
      )
    },
  )

  app.post(
    '/channel/:token',
    {
      config: act,
      schema: actionSchema(
        'channelConfirmationPagePost',
        "Confirm a notification channel's address (the page's button)",
        { 200: htmlPage('Confirmed') },
      ),
    },
    async (request, reply) => {
      const { address } = await channels.confirm(request.params.token)
      const t = textsFor(request)
      return sendPage(
        request,
        reply,
        200,
        t('page.auth.addressConfirmed'),
        html`<p>${t('page.auth.channelConfirmedText', { address })}</p>
<p><a class="button" href="${home(publicUrl)}notifications">${t('page.auth.notificationSettings')}</a></p>`,
      )
    },
  )

  app.get(
    '/reset/:token',
    {
      config: open,
      schema: landingSchema('passwordResetPage', 'Page of a password reset link: a password form'),
    },
    async (request, reply) => {
      const t = textsFor(request)
      return landing(
        request,
        reply,
        await mail.linkState('password-reset', request.params.token),
        t('page.auth.resetTitle'),
        resetForm(t),
      )
    },
  )

  app.post(
    '/reset/:token',
    {
      config: act,
      schema: {
        ...actionSchema('passwordResetPagePost', "Set the new password (the page's form)", {
          ...signedIn,
          400: htmlPage('The password breaks a rule: the form again, saying which'),
        }),
        body: Type.Object(
          { password: Type.String() },
          { additionalProperties: false, examples: [{ password: 'a new and longer passphrase' }] },
        ),
      },
    },
    async (request, reply) => {
      try {
        const started = await mail.resetPassword(
          request.params.token,
          request.body.password,
          client(request),
        )
        setSessionCookie(reply, started.token, publicUrl)
        return reply.redirect(home(publicUrl), 303)
      } catch (err) {
        // a password the rules refuse: the form again, saying why
        if (err instanceof ApiError && err.errorCode === 'validationError') {
          const t = textsFor(request)
          return sendPage(
            request,
            reply,
            400,
            t('page.auth.resetTitle'),
            resetForm(t, err.errors?.[0]?.message ?? 'is not accepted'),
          )
        }
        throw err
      }
    },
  )

  app.get(
    '/link/:token',
    { config: open, schema: landingSchema('signInLinkPage', 'Page of a one-time sign-in link') },
    async (request, reply) => {
      const t = textsFor(request)
      return landing(
        request,
        reply,
        await mail.linkState('sign-in-link', request.params.token),
        t('page.auth.linkSignIn'),
        html`<p>${t('page.auth.linkSignInText')}</p>
<form method="post"><p><button type="submit">${t('page.auth.linkSignInButton')}</button></p></form>`,
      )
    },
  )

  app.post(
    '/link/:token',
    {
      config: act,
      schema: actionSchema('signInLinkPagePost', "Sign in (the page's button)", signedIn),
    },
    async (request, reply) => {
      const started = await mail.signInWithLink(request.params.token, client(request))
      setSessionCookie(reply, started.token, publicUrl)
      return reply.redirect(home(publicUrl), 303)
    },
  )
}
