import type { ComponentChildren } from 'preact'
import { ApiError } from '../api.ts'
import { t } from '../i18n.ts'
import { Link, route } from '../router.tsx'
import { me } from '../session.ts'

// The operators' screens (docs/app.md#operators): one navigation under the screen's heading,
// and what someone who is not an operator sees instead of them.

const ADMIN_PLACES = [
  { href: '/admin', label: () => t('app.adminNav.users') },
  { href: '/admin/instance', label: () => t('app.adminNav.instance') },
  { href: '/admin/audit', label: () => t('app.adminNav.audit') },
  { href: '/admin/backups', label: () => t('app.adminNav.backups') },
]

/** The paths of the operators' screens: the app's navigation marks "Admin" on each. */
export const ADMIN_PATHS: readonly string[] = ADMIN_PLACES.map((place) => place.href)

/** The operators' places; the current one is marked for screen readers too. */
export function AdminNav() {
  const current = route.value.path
  return (
    <nav aria-label={t('app.adminNav.label')} class="status-tabs">
      <ul>
        {ADMIN_PLACES.map((place) => (
          <li key={place.href}>
            <Link href={place.href} aria-current={current === place.href ? 'page' : undefined}>
              {place.label()}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  )
}

/** What a person who is not an operator sees at an operator's screen. */
export function NotAllowed() {
  return (
    <>
      <h1>{t('app.adminNav.notAllowed.title')}</h1>
      <p>
        {t('app.adminNav.notAllowed.text')}{' '}
        <Link href="/">{t('app.adminNav.notAllowed.back')}</Link>
      </p>
    </>
  )
}

/** Whether an error is the API's refusal of someone who is no operator (any more). */
export const refusedAsNoOperator = (error: unknown): boolean =>
  error instanceof ApiError && error.status === 403 && error.errorCode === 'forbidden'

/**
 * An operator's screen: its content for an operator, the not-allowed view for anyone else
 * (the server refuses them all the same, docs/operations.md#operators).
 */
export function OperatorsOnly(props: { children: ComponentChildren }) {
  if (!me.value?.admin) return <NotAllowed />
  return <>{props.children}</>
}
