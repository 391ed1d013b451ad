// The app's service worker (docs/app.md#installing-the-app): an offline shell, never stale
// data. Pages are fetched from the network first and fall back to the last page seen; the
// hashed files of the app (/app/…) are kept once fetched, since their names change with
// their content; the API, event streams, share pages and everything else go to the network
// untouched.
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
