import { signal } from '@preact/signals'
import { useEffect, useState } from 'preact/hooks'
import { api, apiPath } from '../api.ts'
import { t } from '../i18n.ts'
import type { RoleInvitation } from '../types.ts'
import { FormError } from './form.tsx'
import { Rich } from './rich.tsx'

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
        t(
          how === 'decline'
            ? 'app.invitations.declined'
            : invitation.role !== 'owner'
              ? 'app.invitations.accepted'
              : answer?.keyKept === false
                ? 'app.invitations.ownedKeyDropped'
                : 'app.invitations.owned',
          { name: invitation.statusName },
        ),
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
          <h2 id="invitations-heading">{t('app.invitations.title')}</h2>
          <FormError error={error} />
          <ul>
            {items.map((inv) => (
              <li key={inv.id}>
                <span>
                  <Rich
                    text={t(
                      inv.role === 'owner'
                        ? 'app.invitations.offersOwner'
                        : inv.role === 'updater'
                          ? 'app.invitations.invitesUpdater'
                          : 'app.invitations.invitesSubscriber',
                    )}
                    parts={{
                      who: () => <strong class="user-text">{inv.invitedBy.name}</strong>,
                      status: () => <strong class="user-text">{inv.statusName}</strong>,
                    }}
                  />
                </span>
                <span class="actions">
                  <button
                    type="button"
                    class="button primary"
                    aria-label={t('app.invitations.acceptLabel', { name: inv.statusName })}
                    onClick={() => answer(inv, 'accept')}
                  >
                    {t('app.invitations.accept')}
                  </button>
                  <button
                    type="button"
                    class="button"
                    aria-label={t('app.invitations.declineLabel', { name: inv.statusName })}
                    onClick={() => answer(inv, 'decline')}
                  >
                    {t('app.invitations.decline')}
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
