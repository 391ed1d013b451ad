import { batch } from '@preact/signals'
import { useRef, useState } from 'preact/hooks'
import { api, apiPath } from '../api.ts'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { t } from '../i18n.ts'
import { Link, navigate } from '../router.tsx'
import { me } from '../session.ts'
import type { Profile, StatusListEntry, StatusUser } from '../types.ts'
import { passkeyAssertion, passkeysSupported } from '../webauthn.ts'

// Account → "Delete my account" (docs/app.md#deleting-your-account, docs/accounts.md#delete-your-account):
// a dialog that lists the statuses you own that others follow, each linked to its People tab
// to hand it over first, then asks for your password (or a passkey) and deletes the account.

/** An owned status and how many people other than you hold a role on it. */
interface FollowedStatus {
  statusId: string
  name: string
  people: number
}

/** How many role holders' lists are asked for at once. */
const AT_ONCE = 6

/** Your statuses that someone else holds a role on (subscribers, updaters), in your list's order. */
async function followedStatuses(ownerId: string): Promise<FollowedStatus[]> {
  const owned = await api<StatusListEntry[]>('GET', '/v1/user/status')
  const found: (FollowedStatus | null)[] = []
  for (let i = 0; i < owned.length; i += AT_ONCE) {
    const chunk = owned.slice(i, i + AT_ONCE)
    found.push(
      ...(await Promise.all(
        chunk.map(async (s) => {
          const users = await api<StatusUser[]>('GET', apiPath`/v1/status/${s.statusId}/users`)
          const people = users.filter((u) => u.userId !== ownerId).length
          return people > 0 ? { statusId: s.statusId, name: s.name, people } : null
        }),
      )),
    )
  }
  return found.filter((s): s is FollowedStatus => s !== null)
}

export function DeleteAccount({ profile }: { profile: Profile }) {
  const dialog = useRef<HTMLDialogElement>(null)
  const [followed, setFollowed] = useState<FollowedStatus[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const open = async () => {
    setError(null)
    setFollowed(null)
    dialog.current?.showModal()
    try {
      setFollowed(await followedStatuses(profile.id))
    } catch (e) {
      setError(e)
    }
  }

  /** Deletes the account with this confirmation; signed out, the app shows sign-in. */
  const remove = async (confirmation: () => Promise<Record<string, unknown>>) => {
    setBusy(true)
    setError(null)
    try {
      await api('DELETE', '/v1/user', { body: await confirmation() })
      dialog.current?.close()
      batch(() => {
        navigate('/sign-in', { replace: true })
        me.value = null
      })
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  const withPasskey = async () => {
    try {
      return { passkey: await passkeyAssertion() }
    } catch (e) {
      // the person closed the browser's prompt, or it timed out
      if ((e as Error)?.name === 'NotAllowedError')
        throw new Error(t('app.account.delete.passkeyCancelled'))
      throw e
    }
  }

  return (
    <section class="danger-zone" aria-labelledby="delete-account-heading">
      <h2 id="delete-account-heading">{t('app.account.delete.heading')}</h2>
      <p>{t('app.account.delete.intro')}</p>
      <button type="button" class="button danger" onClick={open}>
        {t('app.account.delete.open')}
      </button>
      <dialog ref={dialog} class="confirm" aria-labelledby="delete-account-title">
        <form
          method="dialog"
          onSubmit={(event) => {
            event.preventDefault()
            const password = String(new FormData(event.currentTarget).get('password') ?? '')
            void remove(async () => ({ password }))
          }}
        >
          <h2 id="delete-account-title">{t('app.account.delete.title')}</h2>
          <p>{t('app.account.delete.what')}</p>
          {followed === null ? (
            <p aria-live="polite">{t('app.account.delete.checking')}</p>
          ) : followed.length === 0 ? (
            <p>{t('app.account.delete.noneFollowed')}</p>
          ) : (
            <>
              <p>{t('app.account.delete.followed', { count: followed.length })}</p>
              <ul class="followed-statuses">
                {followed.map((s) => (
                  <li key={s.statusId}>
                    <Link
                      href={`/statuses/${encodeURIComponent(s.statusId)}/people`}
                      class="user-text"
                    >
                      {s.name}
                    </Link>{' '}
                    <span class="muted">{t('app.account.delete.people', { count: s.people })}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
          {profile.hasPassword && (
            <Field
              label={t('app.account.delete.password')}
              name="password"
              type="password"
              autocomplete="current-password"
              required
              error={fieldError(error, 'password')}
            />
          )}
          <FormError error={error} />
          <div class="actions">
            {profile.hasPassword && (
              <button type="submit" class="button danger" disabled={busy}>
                {t('app.account.delete.confirm')}
              </button>
            )}
            {passkeysSupported() && (
              <button
                type="button"
                class={`button${profile.hasPassword ? '' : ' danger'}`}
                disabled={busy}
                onClick={() => void remove(withPasskey)}
              >
                {t('app.account.delete.confirmPasskey')}
              </button>
            )}
            <button type="button" class="button" onClick={() => dialog.current?.close()}>
              {t('app.account.delete.cancel')}
            </button>
          </div>
        </form>
      </dialog>
    </section>
  )
}
