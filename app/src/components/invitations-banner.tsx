import { signal } from '@preact/signals'
import { useEffect, useState } from 'preact/hooks'
import { api, apiPath } from '../api.ts'
import type { RoleInvitation } from '../types.ts'
import { FormError } from './form.tsx'

// Invitations waiting for me (docs/app.md#signing-up): a role someone offered, to accept or
// decline. Shown above every signed-in screen while there are any, so nobody has to go
// looking; once answered they are gone. `invitationsChanged` lets a screen ask for a refresh.

export const invitationsChanged = signal(0)

export function InvitationsBanner(props: { onAccepted?: () => void }) {
  const [items, setItems] = useState<RoleInvitation[]>([])
  const [error, setError] = useState<unknown>(null)
  const [announce, setAnnounce] = useState('')
  const tick = invitationsChanged.value
  useEffect(() => {
    api<RoleInvitation[]>('GET', '/v1/user/invitations').then(setItems, () => setItems([]))
  }, [tick])
  async function answer(invitation: RoleInvitation, how: 'accept' | 'decline') {
    setError(null)
    try {
      await api('POST', apiPath`/v1/user/invitations/${invitation.id}/${how}`)
      setItems((list) => list.filter((i) => i.id !== invitation.id))
      setAnnounce(
        how === 'accept'
          ? `You accepted the invitation to ${invitation.statusName}.`
          : `You declined the invitation to ${invitation.statusName}.`,
      )
      if (how === 'accept') props.onAccepted?.()
    } catch (e) {
      setError(e)
    }
  }
  return (
    <>
      <p class="sr-only" aria-live="polite">
        {announce}
      </p>
      {items.length > 0 && (
        <section class="invitations-banner" aria-labelledby="invitations-heading">
          <h2 id="invitations-heading">Invitations for you</h2>
          <FormError error={error} />
          <ul>
            {items.map((inv) => (
              <li key={inv.id}>
                <span>
                  <strong class="user-text">{inv.invitedBy.name}</strong> invites you to{' '}
                  <strong class="user-text">{inv.statusName}</strong> as{' '}
                  {inv.role === 'updater' ? 'an updater' : 'a subscriber'}.
                </span>
                <span class="actions">
                  <button
                    type="button"
                    class="button primary"
                    aria-label={`Accept the invitation to ${inv.statusName}`}
                    onClick={() => answer(inv, 'accept')}
                  >
                    Accept
                  </button>
                  <button
                    type="button"
                    class="button"
                    aria-label={`Decline the invitation to ${inv.statusName}`}
                    onClick={() => answer(inv, 'decline')}
                  >
                    Decline
                  </button>
                </span>
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  )
}
