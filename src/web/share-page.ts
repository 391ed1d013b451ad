import { dateTimeIn, translator } from '../i18n/i18n.ts'
import type { Language } from '../i18n/languages.ts'
import { html, type SafeHtml } from '../lib/html.ts'
import { isSafeHref } from '../lib/links.ts'
import type { HistoryEntry } from '../modules/statuses/history.schemas.ts'
import type { DescriptionPart, ShareView } from '../modules/statuses/share-view.ts'
import type { StatusUser } from '../modules/statuses/sharing.schemas.ts'
import { STALE_COLOR_NO } from './badge.ts'
import { withMarkup } from './page-language.ts'

/** URLs of the page's stylesheet and script (content-hashed, so they cache for good). */
export interface AssetUrls {
  css: string
  js: string
  icon: string
}

/**
 * A time: server-side in UTC, in the page's language, as text and title; the script shows
 * "5 minutes ago" instead (the date itself for one marked `absolute`), in the viewer's zone.
 */
export const time = (lang: Language, iso: string, { absolute = false } = {}) =>
  html`<time datetime="${iso}" title="${dateTimeIn(lang, iso)}"${absolute ? html` data-absolute` : ''}>${dateTimeIn(lang, iso)}</time>`

/** The description: text escaped, links (already restricted to the plan and to http(s)/mailto). */
export const descriptionHtml = (parts: DescriptionPart[]): SafeHtml =>
  html`${parts.map((p) =>
    p.href !== undefined && isSafeHref(p.href)
      ? html`<a href="${p.href}" rel="nofollow noopener ugc">${p.text}</a>`
      : p.text,
  )}`

const ROLE_NAMES = {
  owner: 'page.share.roleOwner',
  updater: 'page.share.roleUpdater',
  subscriber: 'page.share.roleSubscriber',
} as const

/**
 * What the page's script says as things change (share.js), in the page's language: JSON in
 * the body's `data-texts` (the script puts each in through textContent).
 */
const scriptTexts = (lang: Language): string => {
  const t = translator(lang)
  return JSON.stringify({
    // `{time}` where the script puts the <time>
    changed: t('page.share.changed', { time: '{time}' }),
    staleSince: t('page.share.staleSince', { time: '{time}' }),
    noValue: t('page.share.noValue'),
    live: t('page.share.live'),
    offline: t('page.share.offline'),
    notAvailable: t('page.share.notAvailable'),
    reconnecting: t('page.share.reconnecting'),
    linkEnded: t('page.share.linkEnded'),
    deleted: t('page.share.deleted'),
    unavailable: t('page.share.unavailable'),
    justNow: t('page.common.justNow'),
  })
}

/** The page around `main`: head, stylesheet, script, footer (the share, message and invitation pages). */
export function page(
  lang: Language,
  title: string,
  assets: AssetUrls,
  bodyAttrs: SafeHtml,
  main: SafeHtml,
  head: SafeHtml = html``,
): string {
  return html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="icon" href="${assets.icon}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.css}">
${head}<script src="${assets.js}" defer></script>
</head>
<body${bodyAttrs} data-texts="${scriptTexts(lang)}">
${main}
<footer>${translator(lang)('page.common.footer')}</footer>
</body>
</html>
`.value
}

export interface SharePageInput {
  view: ShareView
  /** Newest first; null when the history is not public. */
  history: HistoryEntry[] | null
  /** Null when the user list is not public. */
  users: StatusUser[] | null
  assets: AssetUrls
  /** The page's language (web/page-language.ts). */
  lang: Language
  /** Where the page's script listens and reads, relative to the page's origin. */
  eventsUrl: string
  historyUrl: string
  /**
   * `share`: a public status's page at `url` (absolute), with link previews. `link`: a private
   * share link's page, which says nothing about the status until its script runs.
   */
  kind: { share: { url: string } } | { link: true }
}

/** Characters of a value as a person counts them, for the stylesheet's first guess at its size. */
const valueLength = (value: string | null) => Math.min(Array.from(value ?? '—').length, 10)

/**
 * Open Graph and Twitter card tags, so a share link pasted into a chat tool previews as the
 * status (docs/sharing.md#link-previews): name, value and when it changed (absolute: a
 * preview is kept for long after it is made). No image: see the docs.
 */
function previewTags(lang: Language, view: ShareView, url: string): SafeHtml {
  const t = translator(lang)
  const description =
    view.value === null
      ? t('page.share.noValue')
      : view.valueUpdatedAt === null
        ? view.value
        : t('page.share.updated', {
            value: view.value,
            time: dateTimeIn(lang, view.valueUpdatedAt),
          })
  return html`<meta name="description" content="${description}">
<meta property="og:type" content="website">
<meta property="og:site_name" content="statusd">
<meta property="og:title" content="${view.name}">
<meta property="og:description" content="${description}">
<meta property="og:url" content="${url}">
<meta name="twitter:card" content="summary">
<meta name="twitter:title" content="${view.name}">
<meta name="twitter:description" content="${description}">
`
}

/**
 * The share page of a public status (docs/sharing.md#share-page-and-badge): everything escaped, no
 * inline script or style. A private share link's page is the same, but its title and head say
 * nothing of the status: whatever fetches the link to preview it (a chat tool's server) learns
 * nothing; the script puts the name in the title for the holder.
 */
export function renderSharePage(input: SharePageInput): string {
  const { view, history, users, kind, lang } = input
  const t = translator(lang)
  const isLink = 'link' in kind
  const title = isLink
    ? t('page.share.privateTitle')
    : view.value === null
      ? view.name
      : `${view.name}: ${view.value}`
  const attrs = html` data-kind="${isLink ? 'link' : 'share'}" data-events="${input.eventsUrl}" data-history="${input.historyUrl}" data-change-count="${view.changeCount}"`
  const main = html`<main>
<div class="top"><span>${t('page.common.status')}</span><span class="live" id="live" data-state="connecting">${t('page.share.connecting')}</span></div>
<h1 id="name" dir="auto">${view.name}</h1>
<p id="value" class="value c${view.stale ? STALE_COLOR_NO : view.colorNo}${view.value === null ? ' empty' : ''}${view.stale ? ' stale' : ''}" data-length="${valueLength(view.value)}" aria-live="polite" dir="auto"><span id="value-text">${view.value ?? '—'}</span></p>
<p class="meta" id="changed">${view.valueUpdatedAt === null ? t('page.share.noValue') : withMarkup((mark) => t('page.share.changed', { time: mark }), time(lang, view.valueUpdatedAt))}</p>
<p class="meta stale-note" id="stale"${view.staleSince === null ? html` hidden` : ''}>${view.staleSince === null ? '' : withMarkup((mark) => t('page.share.staleSince', { time: mark }), time(lang, view.staleSince, { absolute: true }))}</p>
<p class="gone-note" id="gone" role="status" hidden>${t('page.share.gone')}</p>
<p class="description" id="description" dir="auto"${view.descriptionParts.length === 0 ? html` hidden` : ''}>${descriptionHtml(view.descriptionParts)}</p>
${
  history === null
    ? ''
    : html`<section aria-labelledby="history-title">
<h2 id="history-title">${t('page.share.history')}</h2>
<p class="item-side" id="history-empty"${history.length > 0 ? html` hidden` : ''}>${t('page.share.noValueList')}</p>
<ol id="history-list">${history.map(
        (e) =>
          html`<li><span class="item-main" dir="auto">${e.value}</span><span class="item-side">${time(lang, e.at)}${e.by ? html` · ${e.by.name}` : ''}</span></li>`,
      )}</ol>
</section>`
}
${
  users === null
    ? ''
    : html`<section aria-labelledby="people-title">
<h2 id="people-title">${t('page.share.people')}</h2>
<ul>${users.map(
        (u) =>
          html`<li><span class="item-main" dir="auto">${u.name}</span><span class="item-side">${t(ROLE_NAMES[u.role])}</span></li>`,
      )}</ul>
</section>`
}
</main>`
  return page(
    lang,
    title,
    input.assets,
    attrs,
    main,
    isLink ? html`` : previewTags(lang, view, kind.share.url),
  )
}

/** The page for a share id that names no public status (and for other failures). */
export function renderMessagePage(
  lang: Language,
  assets: AssetUrls,
  heading: string,
  text: string,
): string {
  return page(
    lang,
    heading,
    assets,
    html``,
    html`<main>
<div class="top"><span>${translator(lang)('page.common.status')}</span></div>
<h1>${heading}</h1>
<p>${text}</p>
</main>`,
  )
}
