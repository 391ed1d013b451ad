import { type ComponentType, render } from 'preact'
import { useEffect } from 'preact/hooks'
import type { AppPath } from '../../src/web/app-paths.ts'
import './app.css'
import { Layout, Plain } from './components/layout.tsx'
import { RateLimitNotice } from './components/rate-limit-notice.tsx'
import { Unreachable } from './components/unreachable.tsx'
import { t } from './i18n.ts'
import { lazy } from './lazy.tsx'
import { navigate, route, sameOriginTarget } from './router.tsx'
import Board from './screens/board.tsx'
import NotFound from './screens/not-found.tsx'
import SignIn from './screens/sign-in.tsx'
import { loadMe, me, unreachable } from './session.ts'

// The app (docs/app.md): one page, one screen per path of src/web/app-paths.ts.

/** Screens anyone may open; every other one needs a session. */
const SIGNED_OUT: Partial<Record<AppPath, ComponentType>> = {
  '/sign-in': SignIn,
  '/sign-up': lazy(() => import('./screens/sign-up.tsx')),
  '/setup/:token': lazy(() => import('./screens/setup.tsx')),
}

/** Screens of a signed-in person (heavy ones load on first use: lazy). */
const SIGNED_IN: Partial<Record<AppPath, ComponentType<{ params: Record<string, string> }>>> = {
  '/': Board,
  '/find': lazy(() => import('./screens/find.tsx')),
  '/keys': lazy(() => import('./screens/keys.tsx')),
  '/account': lazy(() => import('./screens/account.tsx')),
  '/notifications': lazy(() => import('./screens/notifications.tsx')),
  '/admin/audit': lazy(() =>
    import('./screens/admin-audit.tsx').then((m) => ({ default: m.AdminAudit })),
  ),
  '/statuses/new': lazy(() => import('./screens/new-status.tsx')),
  '/statuses/:id': lazy(() => import('./screens/status.tsx')),
  '/statuses/:id/:tab': lazy(() => import('./screens/status.tsx')),
  '/walls': lazy(() => import('./screens/boards.tsx')),
  '/walls/:id': lazy(() => import('./screens/board-edit.tsx')),
  '/admin': lazy(() => import('./screens/admin-users.tsx')),
  '/admin/instance': lazy(() => import('./screens/admin-instance.tsx')),
  '/admin/backups': lazy(() =>
    import('./screens/admin-backups.tsx').then((m) => ({ default: m.AdminBackups })),
  ),
  '/boards': MovedToWalls,
  '/boards/:id': MovedToWalls,
}

/** A wall's former address (/boards/…): the same screen under /walls. */
function MovedToWalls() {
  queueMicrotask(() =>
    navigate(location.pathname.replace(/^\/boards/, '/walls') + location.search, {
      replace: true,
    }),
  )
  return null
}

function App() {
  useEffect(() => {
    loadMe().catch(() => {
      // an answer the app does not understand: sign-in, where it shows what goes wrong
      me.value = null
    })
  }, [])
  const { path, params } = route.value
  const user = me.value
  // the server is down or this device offline (the service worker served the shell):
  // say so, rather than look signed out
  if (user === undefined && unreachable.value !== null)
    return <Unreachable reason={unreachable.value} />
  if (user === undefined)
    return (
      <>
        <RateLimitNotice />
        <p class="loading" aria-live="polite">
          {t('app.main.loading')}
        </p>
      </>
    )
  if (path && SIGNED_OUT[path]) {
    const Screen = SIGNED_OUT[path] as ComponentType
    if (user && path === '/sign-in') {
      // signed in (now, or already): on to where `next=` leads, as the sign-in screen goes
      const next = new URLSearchParams(location.search).get('next')
      queueMicrotask(() => navigate(sameOriginTarget(next), { replace: true }))
      return null
    }
    return <Screen />
  }
  // an address that is no screen says so, signed in or not (the server answers it with 404)
  if (!path && !user)
    return (
      <Plain>
        <NotFound />
      </Plain>
    )
  if (!user) {
    const next = location.pathname + location.search
    queueMicrotask(() =>
      navigate(next === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(next)}`, {
        replace: true,
      }),
    )
    return null
  }
  const Screen = path ? SIGNED_IN[path] : undefined
  return <Layout>{Screen ? <Screen params={params} /> : <NotFound />}</Layout>
}

render(<App />, document.getElementById('app') as HTMLElement)

if ('serviceWorker' in navigator) {
  // the offline shell (docs/app.md#installing-the-app); data always comes from the network
  navigator.serviceWorker.register('/sw.js').catch(() => {})
}
