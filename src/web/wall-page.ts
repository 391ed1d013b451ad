import { dateTimeIn, translator } from '../i18n/i18n.ts'
import type { Language } from '../i18n/languages.ts'
import { html } from '../lib/html.ts'
import type { PublicBoard } from '../modules/boards/boards.schemas.ts'
import { STALE_COLOR_NO } from './badge.ts'

// The wall page of a public board (docs/app.md#walls-and-the-wall-page), server-rendered: the
// tiles are on the page before the script runs; wall.js then fits them to the screen and
// keeps them live over one event stream.

export interface WallAssets {
  css: string
  js: string
}

/**
 * A tile. A stale status (docs/notifications.md#staleness) is grey, as on the share page and
 * the badge, and says "stale": its colour no longer says how things are. A status the wall
 * may not show is grey with no name and no value, and says why in general terms.
 */
const tile = (lang: Language, { statusId, status }: PublicBoard['tiles'][number]) => {
  const t = translator(lang)
  if (status === null)
    return html`<li class="tile off" data-status-id="${statusId}"><span class="value">—</span><span class="name">${t('page.wall.notAvailable')}</span><span class="meta"><time></time><span class="stale" hidden>${t('page.wall.stale')}</span><span class="why">${t('page.wall.privateOrDeleted')}</span></span></li>`
  const stale = (status as { stale?: boolean }).stale === true
  return html`<li class="tile c${stale ? STALE_COLOR_NO : status.colorNo}${stale ? ' stale' : ''}" data-status-id="${statusId}"><span class="value" dir="auto">${status.value ?? '—'}</span><span class="name" dir="auto">${status.name}</span><span class="meta">${
    status.valueUpdatedAt === null
      ? html`<time></time>`
      : html`<time datetime="${status.valueUpdatedAt}">${dateTimeIn(lang, status.valueUpdatedAt)}</time>`
  }<span class="stale"${stale ? '' : html` hidden`}>${t('page.wall.stale')}</span><span class="why" hidden>${t('page.wall.privateOrDeleted')}</span></span></li>`
}

const head = (lang: Language, title: string, assets: WallAssets) => html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="color-scheme" content="dark">
<title>${title}</title>
<link rel="icon" href="/s/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${assets.css}">
<script src="${assets.js}" defer></script>
</head>`

/**
 * What the wall's script says as things change (wall.js), in the page's language: JSON in
 * the wall's `data-texts` (the script puts each in through textContent).
 */
const scriptTexts = (lang: Language): string => {
  const t = translator(lang)
  return JSON.stringify({
    notAvailable: t('page.wall.notAvailable'),
    privateOrDeleted: t('page.wall.privateOrDeleted'),
    stale: t('page.wall.stale'),
    reconnecting: t('page.wall.reconnecting'),
    unavailable: t('page.wall.unavailable'),
    justNow: t('page.common.justNow'),
  })
}

/** The wall, in `lang`: the board's name, a discreet connection line, and a tile per status. */
export function renderWallPage(lang: Language, board: PublicBoard, assets: WallAssets): string {
  return html`${head(lang, board.name, assets)}
<body>
<main class="wall" data-share-id="${board.shareId}" data-texts="${scriptTexts(lang)}">
<header><h1 dir="auto">${board.name}</h1><p class="connection" role="status" aria-live="polite"></p></header>
<ul class="tiles" aria-label="${translator(lang)('page.wall.statuses')}">${board.tiles.map((entry) => tile(lang, entry))}</ul>
</main>
</body>
</html>
`.value
}

/** A page that says why there is no wall here (unknown, private or deleted board). */
export function renderWallMessage(
  lang: Language,
  title: string,
  message: string,
  assets: WallAssets,
): string {
  return html`${head(lang, title, assets)}
<body>
<main class="wall message"><h1>${title}</h1><p>${message}</p></main>
</body>
</html>
`.value
}
