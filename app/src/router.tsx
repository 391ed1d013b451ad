import { computed, signal } from '@preact/signals'
import type { ComponentChildren } from 'preact'
import { APP_PATHS, type AppPath } from '../../src/web/app-paths.ts'

// The app's router (docs/app.md#screens): the URL is the state. Paths are the server's own
// list (src/web/app-paths.ts), so every screen loads when opened directly or reloaded.

export const currentUrl = signal(new URL(location.href))

/** The path pattern the current URL matches, and its parameters. */
export const route = computed(() => match(currentUrl.value.pathname))

export function match(pathname: string): { path: AppPath | null; params: Record<string, string> } {
  for (const path of APP_PATHS) {
    const params = matchPath(path, pathname)
    if (params) return { path, params }
  }
  return { path: null, params: {} }
}

function matchPath(pattern: string, pathname: string): Record<string, string> | null {
  const want = pattern.split('/')
  const have = pathname.replace(/\/$/, '').split('/')
  if (pattern === '/') return pathname === '/' ? {} : null
  if (want.length !== have.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string
    const h = have[i] as string
    if (w.startsWith(':')) {
      if (!h) return null
      params[w.slice(1)] = decodeURIComponent(h)
    } else if (w !== h) return null
  }
  return params
}

/**
 * Where a `?next=` target leads (docs/security.md): parsed as a URL against this origin and
 * kept only when the result is on it, so a backslash, a tab or an encoded form that the
 * browser reads as another host (`/\host`, `/%09/host`) leads to the board instead.
 */
export function sameOriginTarget(target: string | null): string {
  if (!target) return '/'
  let url: URL
  try {
    url = new URL(target, location.origin)
  } catch {
    return '/'
  }
  return url.origin === location.origin ? url.pathname + url.search + url.hash : '/'
}

/** Goes to a path of the app without reloading (`replace`: no new history entry). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = new URL(to, location.href)
  // a page that is not the app's (an invitation's, a share page): the server's, loaded whole
  if (url.origin !== location.origin || !match(url.pathname).path) {
    location.href = url.href
    return
  }
  if (options.replace) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  currentUrl.value = url
  // a new screen: its heading takes the focus, so screen readers announce it (docs/app.md#accessibility)
  queueMicrotask(() => {
    const heading = document.querySelector<HTMLElement>('main h1')
    if (heading) {
      heading.tabIndex = -1
      heading.focus({ preventScroll: false })
    }
  })
}

addEventListener('popstate', () => {
  currentUrl.value = new URL(location.href)
})

/** An in-app link: a real `<a href>` (middle-click, copy link work) that navigates without reload. */
export function Link(props: {
  href: string
  children: ComponentChildren
  class?: string
  id?: string
  title?: string
  'aria-current'?: 'page' | undefined
  'aria-label'?: string
}) {
  const { href, children, ...rest } = props
  return (
    <a
      {...rest}
      href={href}
      onClick={(event) => {
        if (event.defaultPrevented || event.button !== 0) return
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
        if (!match(new URL(href, location.href).pathname).path) return
        event.preventDefault()
        navigate(href)
      }}
    >
      {children}
    </a>
  )
}
