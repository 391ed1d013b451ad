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
      const answer = await api<{ keyKept?: boolean }>(
        'POST',
        apiPath`/v1/user/invitations/${invitation.id}/${how}`,
      )
      setItems((list) => list.filter((i) => i.id !== invitation.id))
      setAnnounce(
        how === 'decline'
          ? `You declined the invitation to ${invitation.statusName}.`
          : invitation.role !== 'owner'
            ? `You accepted the invitation to ${invitation.statusName}.`
            : answer?.keyKept === false
              ? `You now own ${invitation.statusName}. You had a status by its key, so it has no key now.`
              : `You now own ${invitation.statusName}.`,
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
                  {inv.role === 'owner' ? (
                    <>
                      <strong class="user-text">{inv.invitedBy.name}</strong> offers you{' '}
                      <strong class="user-text">{inv.statusName}</strong>: you would own it, and
                      they would stay on as an updater.
                    </>
                  ) : (
                    <>
                      <strong class="user-text">{inv.invitedBy.name}</strong> invites you to{' '}
                      <strong class="user-text">{inv.statusName}</strong> as{' '}
                      {inv.role === 'updater' ? 'an updater' : 'a subscriber'}.
                    </>
                  )}
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
