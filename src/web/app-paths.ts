/**
 * The app's screens (docs/app.md#screens): the server answers each of these paths with the
 * app's page, and the app's router shows the screen. One list for both, so a link the app
 * makes always loads when opened directly or reloaded. Patterns use `:name` for a segment.
 */
export const APP_PATHS = [
  '/',
  '/sign-in',
  '/sign-up',
  // the first start's one-time setup link (docs/app.md#the-first-start)
  '/setup/:token',
  '/statuses/new',
  '/statuses/:id',
  '/statuses/:id/:tab',
  '/find',
  '/keys',
  '/account',
  '/notifications',
  // the operators' screens (docs/app.md#audit-log)
  '/admin/audit',
  '/walls',
  '/walls/:id',
  // the operators' screens (docs/app.md#operators)
  '/admin',
  '/admin/instance',
  '/admin/backups',
  // the walls' former addresses: the app sends them on to /walls
  '/boards',
  '/boards/:id',
] as const

export type AppPath = (typeof APP_PATHS)[number]
