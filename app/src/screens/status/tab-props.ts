import type { Role } from '../../my-statuses.ts'
import type { Status } from '../../types.ts'

/** What the status screen's frame gives each of its tabs (./tabs.ts). */
export interface StatusTabProps {
  /** The status as it is now (kept live by the frame). */
  status: Status
  /** My role on it. */
  role: Role
  /** A write's answer: the frame shows it at once (and live.ts tells the other screens). */
  onChange: (status: Status) => void
}
