import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import { t } from '../i18n.ts'
import { Link, route } from '../router.tsx'
import { me, signOut } from '../session.ts'
import { ADMIN_PATHS } from './admin-nav.tsx'
import { InvitationsBanner } from './invitations-banner.tsx'
import { LanguagePicker } from './language-picker.tsx'
import { RateLimitNotice } from './rate-limit-notice.tsx'

// The frame of every signed-in screen: a skip link, the header with the app's places, and
// the main landmark (docs/app.md#accessibility). On a phone the header is one row: the
// places scroll sideways within it (app.css).

const PLACES = [
  {
    href: '/',
    label: () => t('app.layout.board'),
    paths: ['/', '/find', '/statuses/new', '/statuses/:id', '/statuses/:id/:tab'],
  },
  { href: '/walls', label: () => t('app.layout.walls'), paths: ['/walls', '/walls/:id'] },
  {
    href: '/notifications',
    label: () => t('app.layout.notifications'),
    paths: ['/notifications'],
  },
  { href: '/keys', label: () => t('app.layout.keys'), paths: ['/keys'] },
  { href: '/account', label: () => t('app.layout.account'), paths: ['/account'] },
]

/** The operators' place (docs/app.md#operators): shown to operators only. */
const ADMIN_PLACE = { href: '/admin', label: () => t('app.layout.admin'), paths: ADMIN_PATHS }

export function Layout(props: { children: ComponentChildren }) {
  const current = route.value.path
  const places = me.value?.admin ? [...PLACES, ADMIN_PLACE] : PLACES
  const nav = useRef<HTMLElement>(null)
  // on a phone the places scroll sideways in one row: the current one is brought into view
  useEffect(() => {
    const here = nav.current?.querySelector<HTMLElement>('[aria-current="page"]')
    const row = nav.current
    if (!here || !row || row.scrollWidth <= row.clientWidth) return
    const left = here.offsetLeft - row.offsetLeft
    if (left < row.scrollLeft || left + here.offsetWidth > row.scrollLeft + row.clientWidth)
      row.scrollLeft = left - (row.clientWidth - here.offsetWidth) / 2
  }, [current])
  return (
    <>
      <a class="skip-link" href="#main">
        {t('app.layout.skip')}
      </a>
      <header class="app-header">
        <Link href="/" class="brand">
          <img src="/app/icon.svg" alt="" width="28" height="28" />
          <span>statusd</span>
        </Link>
        <nav aria-label={t('app.layout.main')} ref={nav}>
          <ul>
            {places.map((place) => (
              <li key={place.href}>
                <Link
                  href={place.href}
                  aria-current={current && place.paths.includes(current) ? 'page' : undefined}
                >
                  {place.label()}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="who-name">{me.value?.name}</span>
          <button
            type="button"
            class="button quiet"
            onClick={async () => {
              await signOut()
            }}
          >
            {t('app.layout.signOut')}
          </button>
        </div>
      </header>
      <main id="main">
        <RateLimitNotice />
        <InvitationsBanner />
        {props.children}
      </main>
    </>
  )
}

/**
 * The frame of the signed-out screens: the name, the form, and the language picker, so a
 * person whose browser speaks another language can sign in or up in theirs (kept on this
 * device only: there is no account yet to keep it on).
 */
export function Plain(props: { children: ComponentChildren }) {
  return (
    <main id="main" class="plain">
      <p class="brand plain-brand">
        <img src="/app/icon.svg" alt="" width="32" height="32" />
        <span>statusd</span>
      </p>
      {props.children}
      <div class="plain-language">
        <LanguagePicker />
      </div>
    </main>
  )
}
