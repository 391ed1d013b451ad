import type { ComponentType } from 'preact'
import { t } from '../../i18n.ts'
import { lazy } from '../../lazy.tsx'
import type { Role } from '../../my-statuses.ts'
import type { Status } from '../../types.ts'
import Overview from './overview.tsx'
import type { StatusTabProps } from './tab-props.ts'

// The status screen's tabs (docs/app.md#a-status): `/statuses/:id` is the first tab,
// `/statuses/:id/<tab>` the others. A screen adds its tab here (lazy, so its code loads on
// first use); the frame (../status.tsx) draws the tab list from this registry and hides a
// tab whose `shows` says no.

export interface StatusTab {
  /** The path segment after the id; '' for the first tab. */
  tab: string
  /** Its name, in the language shown. */
  label: () => string
  component: ComponentType<StatusTabProps>
  /** Whether the tab is offered to this role (default: always). */
  shows?: (role: Role, status: Status) => boolean
}

export const STATUS_TABS: StatusTab[] = [
  { tab: '', label: () => t('app.status.tabs.overview'), component: Overview },
  {
    tab: 'history',
    label: () => t('app.status.tabs.history'),
    component: lazy(() => import('./history.tsx')),
  },
  {
    tab: 'share',
    label: () => t('app.status.tabs.share'),
    component: lazy(() => import('./share.tsx')),
  },
  {
    tab: 'people',
    label: () => t('app.status.tabs.people'),
    component: lazy(() => import('./people.tsx')),
  },
  {
    tab: 'schedule',
    label: () => t('app.status.tabs.schedule'),
    component: lazy(() => import('./schedule.tsx')),
    shows: (role) => role === 'owner',
  },
  {
    tab: 'notifications',
    label: () => t('app.status.tabs.notifications'),
    component: lazy(() => import('./notifications-tab.tsx')),
  },
]
