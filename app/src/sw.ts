// The app's service worker (docs/app.md#installing-the-app): an offline shell, never stale
// data. Pages are fetched from the network first and fall back to the last page seen; the
// hashed files of the app (/app/…) are kept once fetched, since their names change with
// their content; the API, event streams, share pages and everything else go to the network
// untouched.
import type { PushPayload } from './types.ts'

const sw = globalThis as unknown as ServiceWorkerGlobalScope

const CACHE = 'statusd-shell-v1'
const SHELL = '/'

sw.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.add(SHELL))
      .then(() => sw.skipWaiting()),
  )
})

sw.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((n) => n !== CACHE).map((n) => caches.delete(n))))
      .then(() => sw.clients.claim()),
  )
})

sw.addEventListener('fetch', (event) => {
  const request = event.request
  const url = new URL(request.url)
  if (request.method !== 'GET' || url.origin !== sw.location.origin) return
  if (request.mode === 'navigate' && !isElsewhere(url.pathname)) {
    event.respondWith(
      fetch(request).then(
        (response) => {
          if (response.ok) {
            const copy = response.clone()
            caches.open(CACHE).then((cache) => cache.put(SHELL, copy))
          }
          return response
        },
        async () => (await caches.match(SHELL)) ?? Response.error(),
      ),
    )
    return
  }
  if (url.pathname.startsWith('/app/')) {
    event.respondWith(
      caches.match(request).then(
        (hit) =>
          hit ??
          fetch(request).then((response) => {
            if (response.ok) {
              const copy = response.clone()
              caches.open(CACHE).then((cache) => cache.put(request, copy))
            }
            return response
          }),
      ),
    )
  }
})

/** Pages that are not the app's: share pages, walls, links, the API reference. */
const isElsewhere = (path: string) => /^\/(s|b|l|invite|auth|docs|v1)(\/|$)/.test(path)

// Browser notifications (docs/app.md#notifications-in-the-app): the push service wakes the
// worker with the JSON of docs/notifications.md#browser-push, already decrypted by the
// browser; the worker shows it (a notification per push is what userVisibleOnly promises).
sw.addEventListener('push', (event) => {
  let payload: Partial<PushPayload> = {}
  try {
    payload = (event.data?.json() ?? {}) as Partial<PushPayload>
  } catch {
    // not JSON: show it as text rather than nothing
    payload = { title: 'statusd', body: event.data?.text() ?? '' }
  }
  event.waitUntil(
    sw.registration.showNotification(String(payload.title || 'statusd'), {
      body: String(payload.body ?? ''),
      // a newer notice of the same status replaces the older one on screen
      tag: String(payload.tag ?? payload.id ?? ''),
      icon: '/app/icon-192.png',
      badge: '/app/icon-192.png',
      data: { target: clickTarget(payload) },
    }),
  )
})

/**
 * Where a click leads: a status's own screen in the app for a status's events (its id is
 * the payload's `tag`), the notification settings for notices about channels.
 */
function clickTarget(payload: Partial<PushPayload>): string {
  const origin = sw.location.origin
  if (payload.type?.startsWith('status.') && payload.tag)
    return `${origin}/statuses/${encodeURIComponent(payload.tag)}`
  return `${origin}/notifications`
}

sw.addEventListener('notificationclick', (event) => {
  event.notification.close()
  const target = String((event.notification.data as { target?: string } | null)?.target ?? '/')
  event.waitUntil(
    sw.clients.matchAll({ type: 'window', includeUncontrolled: true }).then(async (windows) => {
      // an open window of the app is reused: focused, and taken to the status
      const open = windows.find((w) => new URL(w.url).origin === sw.location.origin)
      if (open) {
        await open.focus()
        if (open.url !== target) await open.navigate(target).catch(() => null)
        return
      }
      await sw.clients.openWindow(target)
    }),
  )
})
