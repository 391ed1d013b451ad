import { readFileSync } from 'node:fs'
import { type PageAsset, pageAsset } from './page-assets.ts'
import { paletteCss } from './palette.ts'
import type { AssetUrls } from './share-page.ts'

// The files the share, message and invitation pages load, and the link pages (`/auth/…`):
// served under `/s/assets/` (web.routes.ts).

export const ASSETS: Record<string, PageAsset> = {
  'share.css': pageAsset(
    '/s/assets',
    'share.css',
    'text/css; charset=utf-8',
    `${readFileSync(new URL('./assets/share.css', import.meta.url), 'utf8')}\n${paletteCss()}\n`,
  ),
  'share.js': pageAsset(
    '/s/assets',
    'share.js',
    'text/javascript; charset=utf-8',
    readFileSync(new URL('./assets/share.js', import.meta.url), 'utf8'),
  ),
  // the link pages' forms (web/auth-pages.routes.ts), on top of share.css
  'auth.css': pageAsset(
    '/s/assets',
    'auth.css',
    'text/css; charset=utf-8',
    readFileSync(new URL('./assets/auth.css', import.meta.url), 'utf8'),
  ),
  'favicon.svg': pageAsset(
    '/s/assets',
    'favicon.svg',
    'image/svg+xml; charset=utf-8',
    readFileSync(new URL('./assets/favicon.svg', import.meta.url), 'utf8'),
  ),
}
export const ASSET_URLS: AssetUrls = {
  css: (ASSETS['share.css'] as PageAsset).url,
  js: (ASSETS['share.js'] as PageAsset).url,
  icon: (ASSETS['favicon.svg'] as PageAsset).url,
}

/** What the link pages (`/auth/…`) load: the share page's stylesheet, their own, the icon. */
export const AUTH_PAGE_ASSET_URLS = {
  stylesheets: [ASSET_URLS.css, (ASSETS['auth.css'] as PageAsset).url],
  icon: ASSET_URLS.icon,
}
