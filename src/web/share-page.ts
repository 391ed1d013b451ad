import { html, type SafeHtml } from '../lib/html.ts'
import { isSafeHref } from '../lib/links.ts'
import type { HistoryEntry } from '../modules/statuses/history.schemas.ts'
import type { DescriptionPart, ShareView } from '../modules/statuses/share-view.ts'
import type { StatusUser } from '../modules/statuses/sharing.schemas.ts'
import { STALE_COLOR_NO } from './badge.ts'

/** URLs of the page's stylesheet and script (content-hashed, so they cache for good). */
export interface AssetUrls {
  css: string
  js: string
  icon: string
}

/** Server-side time text; the script replaces it with the viewer's local time. */
export function formatUtc(iso: string): string {
  const at = new Date(iso)
  if (Number.isNaN(at.getTime())) return iso
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

/** A time: server-side in UTC, as text and title; the script shows "5 minutes ago" instead. */
const time = (iso: string) =>
  html`<time datetime="${iso}" title="${formatUtc(iso)}">${formatUtc(iso)}</time>`

/** The description: text escaped, links (already restricted to the plan and to http(s)/mailto). */
export const descriptionHtml = (parts: DescriptionPart[]): SafeHtml =>
  html`${parts.map((p) =>
    p.href !== undefined && isSafeHref(p.href)
      ? html`<a href="${p.href}" rel="nofollow noopener ugc">${p.text}</a>`
      : p.text,
  )}`

const ROLE_NAMES = { owner: 'Owner', updater: 'Updater', subscriber: 'Subscriber' } as const

/** The page around `main`: head, stylesheet, script, footer (the share, message and invitation pages). */
export function page(
  title: string,
  assets: AssetUrls,
  bodyAttrs: SafeHtml,
  main: SafeHtml,
  head: SafeHtml = html``,
): string {
  return html`<!doctype html>
<html lang="en">
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
<body${bodyAttrs}>
${main}
<footer>Shared with statusd</footer>
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
function previewTags(view: ShareView, url: string): SafeHtml {
  const description =
    view.value === null
      ? 'No value yet'
      : view.valueUpdatedAt === null
        ? view.value
        : `${view.value} · updated ${formatUtc(view.valueUpdatedAt)}`
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
  const { view, history, users, kind } = input
  const isLink = 'link' in kind
  const title = isLink
    ? 'Private status'
    : view.value === null
      ? view.name
      : `${view.name}: ${view.value}`
  const attrs = html` data-kind="${isLink ? 'link' : 'share'}" data-events="${input.eventsUrl}" data-history="${input.historyUrl}" data-change-count="${view.changeCount}"`
  const main = html`<main>
<div class="top"><span>Status</span><span class="live" id="live" data-state="connecting">Connecting…</span></div>
<h1 id="name" dir="auto">${view.name}</h1>
<p id="value" class="value c${view.stale ? STALE_COLOR_NO : view.colorNo}${view.value === null ? ' empty' : ''}${view.stale ? ' stale' : ''}" data-length="${valueLength(view.value)}" aria-live="polite" dir="auto"><span id="value-text">${view.value ?? '—'}</span></p>
<p class="meta" id="changed">${view.valueUpdatedAt === null ? 'No value yet' : html`Changed ${time(view.valueUpdatedAt)}`}</p>
<p class="meta stale-note" id="stale"${view.staleSince === null ? html` hidden` : ''}>${view.staleSince === null ? '' : html`Stale since ${time(view.staleSince)}`}</p>
<p class="gone-note" id="gone" role="status" hidden>This status is not available right now.</p>
<p class="description" id="description" dir="auto"${view.descriptionParts.length === 0 ? html` hidden` : ''}>${descriptionHtml(view.descriptionParts)}</p>
${
  history === null
    ? ''
    : html`<section aria-labelledby="history-title">
<h2 id="history-title">History</h2>
<p class="item-side" id="history-empty"${history.length > 0 ? html` hidden` : ''}>No value yet.</p>
<ol id="history-list">${history.map(
        (e) =>
          html`<li><span class="item-main" dir="auto">${e.value}</span><span class="item-side">${time(e.at)}${e.by ? html` · ${e.by.name}` : ''}</span></li>`,
      )}</ol>
</section>`
}
${
  users === null
    ? ''
    : html`<section aria-labelledby="people-title">
<h2 id="people-title">People</h2>
<ul>${users.map(
        (u) =>
          html`<li><span class="item-main" dir="auto">${u.name}</span><span class="item-side">${ROLE_NAMES[u.role]}</span></li>`,
      )}</ul>
</section>`
}
</main>`
  return page(title, input.assets, attrs, main, isLink ? html`` : previewTags(view, kind.share.url))
}

/** The page for a share id that names no public status (and for other failures). */
export function renderMessagePage(assets: AssetUrls, heading: string, text: string): string {
  return page(
    heading,
    assets,
    html``,
    html`<main>
<div class="top"><span>Status</span></div>
<h1>${heading}</h1>
<p>${text}</p>
</main>`,
  )
}
