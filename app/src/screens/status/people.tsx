import { useEffect, useState } from 'preact/hooks'
import { ApiError, api, apiPath } from '../../api.ts'
import { ConfirmButton } from '../../components/confirm.tsx'
import { CopyField } from '../../components/copy.tsx'
import { Field, FormError, fieldError } from '../../components/form.tsx'
import { t } from '../../i18n.ts'
import { dateTime as when } from '../../time.ts'
import type {
  CreatedInvitationLink,
  InvitationLink,
  RoleInvitation,
  StatusUser,
} from '../../types.ts'
import type { StatusTabProps } from './tab-props.ts'

// The people tab (docs/app.md#people-and-invitations): who has which role, inviting by
// e-mail or by link, the invitations still open, changing and removing roles. A role is never
// imposed: raising someone is an invitation they accept (docs/accounts.md#invitations).

type Role = 'updater' | 'subscriber'
/** A role's name, in the language shown. */
const roleText = (role: 'owner' | Role): string =>
  ({
    owner: t('app.status.people.roles.owner'),
    updater: t('app.status.people.roles.updater'),
    subscriber: t('app.status.people.roles.subscriber'),
  })[role]

/** A role's name inside a sentence ("the updater link"). */
const roleInText = (role: Role): string =>
  ({
    updater: t('app.status.people.rolesInText.updater'),
    subscriber: t('app.status.people.rolesInText.subscriber'),
  })[role]

export default function PeopleTab(props: StatusTabProps) {
  const statusId = props.status.id
  const isOwner = props.role === 'owner'
  const [users, setUsers] = useState<StatusUser[] | null>(null)
  const [pending, setPending] = useState<RoleInvitation[]>([])
  const [links, setLinks] = useState<InvitationLink[]>([])
  const [error, setError] = useState<unknown>(null)
  const [announce, setAnnounce] = useState('')

  async function load() {
    try {
      const list = await api<StatusUser[]>('GET', apiPath`/v1/status/${statusId}/users`)
      setUsers(list)
      if (isOwner) {
        const [p, l] = await Promise.all([
          api<RoleInvitation[]>('GET', apiPath`/v1/status/${statusId}/invitations/pending`),
          api<InvitationLink[]>('GET', apiPath`/v1/status/${statusId}/invitations`),
        ])
        setPending(p)
        setLinks(l)
      }
    } catch (e) {
      setError(e)
    }
  }
  useEffect(() => {
    load()
  }, [statusId])

  if (error && !users) {
    if (error instanceof ApiError && error.status === 403)
      return <p>{t('app.status.people.hidden')}</p>
    return <FormError error={error} />
  }
  if (!users)
    return (
      <p class="loading" aria-live="polite">
        {t('app.status.loading')}
      </p>
    )
  const done = async (message: string) => {
    setAnnounce(message)
    setError(null)
    await load()
  }
  return (
    <div class="people-tab">
      <p class="sr-only" aria-live="polite">
        {announce}
      </p>
      <FormError error={error} />
      <section aria-labelledby="people-roles">
        <h2 id="people-roles">{t('app.status.people.title')}</h2>
        <ul class="people-list">
          {users.map((user) => (
            <li key={user.userId} class="person">
              <span class="person-name">{user.name}</span>
              {isOwner && user.role !== 'owner' ? (
                <span class="person-actions">
                  <label class="sr-only" for={`role-${user.userId}`}>
                    {t('app.status.people.roleOf', { name: user.name })}
                  </label>
                  <select
                    id={`role-${user.userId}`}
                    value={user.role}
                    onChange={async (event) => {
                      const role = event.currentTarget.value as Role
                      try {
                        const res = await fetchRole(statusId, user.userId, role)
                        await done(
                          res === 'invited'
                            ? role === 'updater'
                              ? t('app.status.people.invitedUpdater', { name: user.name })
                              : t('app.status.people.invitedSubscriber', { name: user.name })
                            : role === 'updater'
                              ? t('app.status.people.nowUpdater', { name: user.name })
                              : t('app.status.people.nowSubscriber', { name: user.name }),
                        )
                      } catch (e) {
                        setError(e)
                      }
                    }}
                  >
                    <option value="updater">{roleText('updater')}</option>
                    <option value="subscriber">{roleText('subscriber')}</option>
                  </select>
                  <ConfirmButton
                    label={t('app.status.people.remove.label')}
                    ariaLabel={t('app.status.people.remove.aria', { name: user.name })}
                    title={t('app.status.people.remove.title', { name: user.name })}
                    confirmLabel={t('app.status.people.remove.confirm')}
                    onConfirm={async () => {
                      await api('DELETE', apiPath`/v1/status/${statusId}/users/${user.userId}`)
                      await done(t('app.status.people.remove.done', { name: user.name }))
                    }}
                  >
                    <p>{t('app.status.people.remove.what')}</p>
                  </ConfirmButton>
                  <ConfirmButton
                    label={t('app.status.people.handOver.label')}
                    ariaLabel={t('app.status.people.handOver.aria', { name: user.name })}
                    title={t('app.status.people.handOver.title', { name: user.name })}
                    confirmLabel={t('app.status.people.handOver.confirm')}
                    buttonClass="quiet"
                    onConfirm={async () => {
                      await api('POST', apiPath`/v1/status/${statusId}/transfer`, {
                        body: { userId: user.userId },
                      })
                      await done(t('app.status.people.handOver.done', { name: user.name }))
                    }}
                  >
                    <p>{t('app.status.people.handOver.what')}</p>
                  </ConfirmButton>
                </span>
              ) : (
                <span class="role-chip">{roleText(user.role)}</span>
              )}
            </li>
          ))}
        </ul>
      </section>
      {isOwner && (
        <>
          <Invite statusId={statusId} onDone={done} />
          <Pending
            statusId={statusId}
            pending={pending}
            links={links}
            onDone={done}
            onError={setError}
          />
        </>
      )}
    </div>
  )
}

async function fetchRole(statusId: string, userId: string, role: Role): Promise<'invited' | 'set'> {
  const answer = await api<{ invitedBy?: unknown }>(
    'PUT',
    apiPath`/v1/status/${statusId}/users/${userId}`,
    { body: { role } },
  )
  // 202 answers an invitation (it has invitedBy), 200 the user-list entry
  return answer && 'invitedBy' in answer ? 'invited' : 'set'
}

function Invite(props: { statusId: string; onDone: (message: string) => Promise<void> }) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [made, setMade] = useState<CreatedInvitationLink | null>(null)
  return (
    <section aria-labelledby="people-invite">
      <h2 id="people-invite">{t('app.status.people.invite.title')}</h2>
      <p class="hint">{t('app.status.people.invite.what')}</p>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const form = new FormData(event.currentTarget)
          const email = String(form.get('email') ?? '').trim()
          const maxUses = Number(form.get('maxUses'))
          const days = Number(form.get('days'))
          setBusy(true)
          setError(null)
          try {
            const link = await api<CreatedInvitationLink>(
              'POST',
              apiPath`/v1/status/${props.statusId}/invitations`,
              {
                body: {
                  role: form.get('role'),
                  ...(email && { email }),
                  ...(!email && { maxUses }),
                  expiresAt: new Date(Date.now() + days * 24 * 60 * 60_000).toISOString(),
                },
              },
            )
            setMade(link)
            ;(event.target as HTMLFormElement).reset()
            await props.onDone(
              link.mailed
                ? t('app.status.people.invite.mailed', { email: link.email })
                : t('app.status.people.invite.made'),
            )
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <div class="field">
          <label for="invite-role">{t('app.status.people.invite.role')}</label>
          <p class="hint" id="invite-role-hint">
            {t('app.status.people.invite.roleHint')}
          </p>
          <select id="invite-role" name="role" aria-describedby="invite-role-hint">
            <option value="subscriber">{roleText('subscriber')}</option>
            <option value="updater">{roleText('updater')}</option>
          </select>
        </div>
        <Field
          label={t('app.status.people.invite.email')}
          name="email"
          type="email"
          autocomplete="off"
          hint={t('app.status.people.invite.emailHint')}
          error={fieldError(error, 'email')}
        />
        <div class="invite-numbers">
          <Field
            label={t('app.status.people.invite.uses')}
            name="maxUses"
            type="number"
            min={1}
            max={100}
            value="1"
            required
            hint={t('app.status.people.invite.usesHint')}
            error={fieldError(error, 'maxUses')}
          />
          <Field
            label={t('app.status.people.invite.days')}
            name="days"
            type="number"
            min={1}
            max={30}
            value="7"
            required
            error={fieldError(error, 'expiresAt')}
          />
        </div>
        <FormError error={error} />
        <button type="submit" class="button primary" disabled={busy}>
          {t('app.status.people.invite.submit')}
        </button>
      </form>
      {made && (
        <div class="once">
          <p>
            {made.mailed ? (
              <>
                {t('app.status.people.invite.mailedTo')} <strong>{made.email}</strong>.{' '}
              </>
            ) : null}
            <strong>{t('app.status.people.invite.copyNow')}</strong>{' '}
            {t('app.status.people.invite.onlyOnce')}
          </p>
          <CopyField
            label={t('app.status.people.invite.link')}
            text={made.url}
            buttonLabel={t('app.status.people.invite.copyLink')}
          />
          <button type="button" class="button quiet" onClick={() => setMade(null)}>
            {t('app.status.people.invite.done')}
          </button>
        </div>
      )}
    </section>
  )
}

function Pending(props: {
  statusId: string
  pending: RoleInvitation[]
  links: InvitationLink[]
  onDone: (message: string) => Promise<void>
  onError: (error: unknown) => void
}) {
  const { statusId } = props
  const open = props.links.filter((l) => l.state === 'active')
  return (
    <section aria-labelledby="people-pending">
      <h2 id="people-pending">{t('app.status.people.pending.title')}</h2>
      {props.pending.length === 0 && open.length === 0 && (
        <p class="muted">{t('app.status.people.pending.none')}</p>
      )}
      <ul class="people-list">
        {props.pending.map((inv) => (
          <li key={inv.id} class="person">
            <span class="person-name">
              {inv.role === 'owner'
                ? t('app.status.people.pending.transfer', { since: when(inv.createdAt) })
                : t('app.status.people.pending.role', {
                    role: roleText(inv.role),
                    since: when(inv.createdAt),
                  })}
            </span>
            <ConfirmButton
              label={t('app.status.people.pending.withdraw')}
              ariaLabel={t('app.status.people.pending.withdrawAria', { made: when(inv.createdAt) })}
              title={t('app.status.people.pending.withdrawTitle')}
              confirmLabel={t('app.status.people.pending.withdraw')}
              onConfirm={async () => {
                // a transfer is withdrawn on its own: the user keeps the role they have
                await api(
                  'DELETE',
                  inv.role === 'owner'
                    ? apiPath`/v1/status/${statusId}/transfer`
                    : apiPath`/v1/status/${statusId}/users/${inv.userId}`,
                )
                await props.onDone(t('app.status.people.pending.withdrawn'))
              }}
            />
          </li>
        ))}
        {open.map((link) => (
          <li key={link.id} class="person">
            <span class="person-name">
              {link.email
                ? t('app.status.people.pending.linkFor', {
                    role: roleText(link.role),
                    email: link.email,
                  })
                : t('app.status.people.pending.link', { role: roleText(link.role) })}
              :{' '}
              {t('app.status.people.pending.usesLeft', {
                count: link.maxUses,
                left: link.usesLeft,
                until: when(link.expiresAt),
              })}
            </span>
            <ConfirmButton
              label={t('app.status.people.pending.revoke')}
              ariaLabel={
                link.email
                  ? t('app.status.people.pending.revokeAriaFor', {
                      role: roleInText(link.role),
                      email: link.email,
                      made: when(link.createdAt),
                    })
                  : t('app.status.people.pending.revokeAria', {
                      role: roleInText(link.role),
                      made: when(link.createdAt),
                    })
              }
              title={t('app.status.people.pending.revokeTitle')}
              confirmLabel={t('app.status.people.pending.revoke')}
              onConfirm={async () => {
                await api('DELETE', apiPath`/v1/status/${statusId}/invitations/${link.id}`)
                await props.onDone(t('app.status.people.pending.revoked'))
              }}
            >
              <p>{t('app.status.people.pending.revokeWhat')}</p>
            </ConfirmButton>
          </li>
        ))}
      </ul>
    </section>
  )
}
