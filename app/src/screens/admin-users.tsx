import { useEffect, useState } from 'preact/hooks'
import { api, apiPage, apiPath } from '../api.ts'
import {
  AdminNav,
  NotAllowed,
  OperatorsOnly,
  refusedAsNoOperator,
} from '../components/admin-nav.tsx'
import { ConfirmButton } from '../components/confirm.tsx'
import { CopyField } from '../components/copy.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { When } from '../components/when.tsx'
import { t } from '../i18n.ts'
import { currentUrl, navigate } from '../router.tsx'
import { me } from '../session.ts'
import type { AdminInvitation, AdminUser, SignInLink } from '../types.ts'

// Users, for operators (docs/app.md#operators): find someone by name or address, change their
// plan, verify them, disable or enable them, delete them, make them a sign-in link, and invite
// someone by e-mail (GET/PATCH/DELETE /v1/admin/users…, POST /v1/admin/invitations). The
// search is in the address (`?q=`), so a reload or a shared link shows the same list.

export default function AdminUsers() {
  return (
    <OperatorsOnly>
      <Users />
    </OperatorsOnly>
  )
}

function Users() {
  const q = currentUrl.value.searchParams.get('q') ?? ''
  const [query, setQuery] = useState(q)
  const [users, setUsers] = useState<AdminUser[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState('')

  /** The first page (`path` null) or the next one, after what is shown. */
  async function load(path: string | null, signal?: AbortSignal) {
    setBusy(true)
    setError(null)
    try {
      const first = q ? `/v1/admin/users?q=${encodeURIComponent(q)}` : '/v1/admin/users'
      const page = await apiPage<AdminUser>(path ?? first, signal)
      setUsers((before) => (path && before ? [...before, ...page.items] : page.items))
      setNext(page.next)
    } catch (e) {
      if ((e as Error).name !== 'AbortError') setError(e)
    } finally {
      setBusy(false)
    }
  }

  useEffect(() => {
    setQuery(q)
    // a new search shows no list until its own answer: never the last one under its heading
    setUsers(null)
    setNext(null)
    const controller = new AbortController()
    void load(null, controller.signal)
    return () => controller.abort()
  }, [q])

  if (refusedAsNoOperator(error)) return <NotAllowed />

  const replace = (changed: AdminUser) =>
    setUsers((before) => before?.map((u) => (u.id === changed.id ? changed : u)) ?? null)

  return (
    <>
      <h1>{t('app.admin.users.title')}</h1>
      <AdminNav />
      <p class="notice" aria-live="polite">
        {notice}
      </p>

      <Invite
        onInvited={(invitation) => {
          // the new account, where the list (in the order accounts were made) has it
          void load(null)
          setNotice(
            invitation.mailed
              ? t('app.admin.users.invitedMailed', {
                  name: invitation.user.name,
                  email: invitation.user.email,
                })
              : t('app.admin.users.invitedHandOver', { name: invitation.user.name }),
          )
        }}
      />

      <form
        class="find-form admin-search"
        onSubmit={(event) => {
          event.preventDefault()
          const words = query.trim()
          // a new entry in the history: Back returns to the list before this search
          navigate(words ? `/admin?q=${encodeURIComponent(words)}` : '/admin')
        }}
      >
        <Field
          label={t('app.admin.users.find')}
          hint={t('app.admin.users.findHint')}
          type="search"
          name="q"
          value={query}
          onInput={(event) => setQuery(event.currentTarget.value)}
        />
        <button type="submit" class="button">
          {t('app.admin.users.search')}
        </button>
      </form>

      <h2>{q ? t('app.admin.users.matching', { q }) : t('app.admin.users.every')}</h2>
      <FormError error={error} />
      {users === null && !error && <p class="loading">{t('app.admin.loading')}</p>}
      <p class="muted" aria-live="polite">
        {users &&
          (users.length === 0
            ? q
              ? t('app.admin.users.nobody')
              : t('app.admin.users.none')
            : next
              ? t('app.admin.users.countMore', { count: users.length })
              : t('app.admin.users.count', { count: users.length }))}
      </p>
      {users && users.length > 0 && (
        <ul class="item-list admin-users">
          {users.map((user) => (
            <UserItem
              key={user.id}
              user={user}
              onChanged={(changed, said) => {
                replace(changed)
                setNotice(said)
              }}
              onDeleted={(said) => {
                setUsers((before) => before?.filter((u) => u.id !== user.id) ?? null)
                setNotice(said)
              }}
            />
          ))}
        </ul>
      )}
      {next && (
        <p>
          <button type="button" class="button" disabled={busy} onClick={() => load(next)}>
            {t('app.admin.users.more')}
          </button>
        </p>
      )}
    </>
  )
}

function UserItem(props: {
  user: AdminUser
  onChanged: (user: AdminUser, notice: string) => void
  onDeleted: (notice: string) => void
}) {
  const { user } = props
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [link, setLink] = useState<SignInLink | null>(null)
  const self = user.id === me.value?.id

  /** Changes the user; a failure is thrown (a dialog shows it). */
  async function change(body: Record<string, unknown>, said: string) {
    const changed = await api<AdminUser>('PATCH', apiPath`/v1/admin/users/${user.id}`, { body })
    props.onChanged(changed, said)
  }
  /** Changes the user from a button of the item; a failure shows under the buttons. */
  async function act(body: Record<string, unknown>, said: string) {
    setBusy(true)
    setError(null)
    try {
      await change(body, said)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  return (
    <li class={`item admin-user${user.disabled ? ' admin-user-disabled' : ''}`}>
      <div class="key-head">
        <strong class="key-label">{user.name}</strong>{' '}
        <span class="muted">{user.email ?? t('app.admin.users.noEmail')}</span>{' '}
        {user.admin && <span class="badge">{t('app.admin.users.badges.operator')}</span>}{' '}
        {user.disabled && <span class="badge">{t('app.admin.users.badges.disabled')}</span>}{' '}
        {user.authLevel !== 'verified' && (
          <span class="badge">{t('app.admin.users.badges.notVerified')}</span>
        )}
      </div>
      <dl class="facts">
        <dt>{t('app.admin.users.facts.plan')}</dt>
        <dd>{user.plan}</dd>
        <dt>{t('app.admin.users.facts.address')}</dt>
        <dd>
          {user.email === null
            ? '—'
            : user.emailVerified
              ? t('app.admin.users.facts.confirmed')
              : t('app.admin.users.facts.notConfirmed')}
        </dd>
        <dt>{t('app.admin.users.facts.statuses')}</dt>
        <dd>{user.statusCount}</dd>
        <dt>{t('app.admin.users.facts.joined')}</dt>
        <dd>
          <When iso={user.createdAt} />
        </dd>
        <dt>{t('app.admin.users.facts.lastSignIn')}</dt>
        <dd>
          <When iso={user.lastSignInAt} never={t('app.admin.users.facts.never')} />
        </dd>
        {user.disabledAt && (
          <>
            <dt>{t('app.admin.users.facts.disabled')}</dt>
            <dd>
              <When iso={user.disabledAt} />
            </dd>
          </>
        )}
      </dl>
      <details class="panel">
        <summary>
          {t('app.admin.users.manage')} <span class="sr-only">{user.name}</span>
        </summary>
        <form
          class="inline-form"
          aria-label={t('app.admin.users.planOf', { name: user.name })}
          onSubmit={(event) => {
            event.preventDefault()
            const plan = String(new FormData(event.currentTarget).get('plan') ?? '').trim()
            if (plan && plan !== user.plan)
              void act({ plan }, t('app.admin.users.done.plan', { name: user.name, plan }))
          }}
        >
          <Field
            label={t('app.admin.users.facts.plan')}
            name="plan"
            defaultValue={user.plan}
            required
            error={fieldError(error, 'plan')}
          />
          <button type="submit" class="button" disabled={busy}>
            {t('app.admin.users.changePlan')}
          </button>
        </form>
        <div class="actions">
          {user.authLevel === 'verified' ? (
            <button
              type="button"
              class="button"
              disabled={busy}
              onClick={() =>
                act({ verified: false }, t('app.admin.users.done.unverified', { name: user.name }))
              }
            >
              {t('app.admin.users.unverify')}
            </button>
          ) : (
            <button
              type="button"
              class="button"
              disabled={busy}
              onClick={() =>
                act({ verified: true }, t('app.admin.users.done.verified', { name: user.name }))
              }
            >
              {t('app.admin.users.verify')}
            </button>
          )}
          {user.disabled ? (
            <button
              type="button"
              class="button"
              disabled={busy}
              onClick={() =>
                act({ disabled: false }, t('app.admin.users.done.enabled', { name: user.name }))
              }
            >
              {t('app.admin.users.enable')}
            </button>
          ) : self ? null : (
            <ConfirmButton
              label={t('app.admin.users.disable.label')}
              ariaLabel={t('app.admin.users.disable.aria', { name: user.name })}
              title={t('app.admin.users.disable.title', { name: user.name })}
              confirmLabel={t('app.admin.users.disable.confirm')}
              disabled={busy}
              onConfirm={() =>
                change({ disabled: true }, t('app.admin.users.done.disabled', { name: user.name }))
              }
            >
              <p>{t('app.admin.users.disable.what')}</p>
            </ConfirmButton>
          )}
          {!self &&
            (user.admin ? (
              <ConfirmButton
                label={t('app.admin.users.unmakeOperator.label')}
                ariaLabel={t('app.admin.users.unmakeOperator.aria', { name: user.name })}
                title={t('app.admin.users.unmakeOperator.title', { name: user.name })}
                confirmLabel={t('app.admin.users.unmakeOperator.label')}
                buttonClass=""
                onConfirm={() =>
                  change(
                    { admin: false },
                    t('app.admin.users.done.unmadeOperator', { name: user.name }),
                  )
                }
              >
                <p>{t('app.admin.users.unmakeOperator.what')}</p>
              </ConfirmButton>
            ) : (
              <ConfirmButton
                label={t('app.admin.users.makeOperator.label')}
                ariaLabel={t('app.admin.users.makeOperator.aria', { name: user.name })}
                title={t('app.admin.users.makeOperator.title', { name: user.name })}
                confirmLabel={t('app.admin.users.makeOperator.label')}
                buttonClass=""
                onConfirm={() =>
                  change(
                    { admin: true },
                    t('app.admin.users.done.madeOperator', { name: user.name }),
                  )
                }
              >
                <p>{t('app.admin.users.makeOperator.what')}</p>
              </ConfirmButton>
            ))}
          <button
            type="button"
            class="button"
            disabled={busy || user.disabled}
            onClick={async () => {
              setBusy(true)
              setError(null)
              try {
                setLink(
                  await api<SignInLink>('POST', apiPath`/v1/admin/users/${user.id}/sign-in-link`),
                )
              } catch (e) {
                setError(e)
              } finally {
                setBusy(false)
              }
            }}
          >
            {t('app.admin.users.signInLink.make')}
          </button>
          {!self && (
            <ConfirmButton
              label={t('app.admin.users.delete.label')}
              ariaLabel={t('app.admin.users.delete.aria', { name: user.name })}
              title={t('app.admin.users.delete.title', { name: user.name })}
              confirmLabel={t('app.admin.users.delete.confirm')}
              onConfirm={async () => {
                await api('DELETE', apiPath`/v1/admin/users/${user.id}`)
                props.onDeleted(t('app.admin.users.done.deleted', { name: user.name }))
              }}
            >
              <p>{t('app.admin.users.delete.what')}</p>
            </ConfirmButton>
          )}
        </div>
        <FormError error={fieldError(error, 'plan') ? null : error} />
        {link && (
          <div class="callout">
            <CopyField
              label={t('app.admin.users.signInLink.label')}
              text={link.url}
              buttonLabel={t('app.admin.users.copyLink')}
            />
            <p class="hint">
              {t('app.admin.users.worksOnceUntil')} <When iso={link.expiresAt} />.{' '}
              {t('app.admin.users.signInLink.handOver', { name: user.name })}
            </p>
          </div>
        )}
      </details>
    </li>
  )
}

/**
 * Invites someone (POST /v1/admin/invitations): their account is made at once, and a link to
 * sign in is mailed to them, or shown here to hand over when the service sends no e-mail.
 */
function Invite(props: { onInvited: (invitation: AdminInvitation) => void }) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [handOver, setHandOver] = useState<AdminInvitation | null>(null)
  return (
    <details class="panel">
      <summary>{t('app.admin.users.invite.title')}</summary>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const form = event.currentTarget
          const data = new FormData(form)
          const text = (name: string) => String(data.get(name) ?? '').trim()
          setBusy(true)
          setError(null)
          setHandOver(null)
          try {
            const invitation = await api<AdminInvitation>('POST', '/v1/admin/invitations', {
              body: {
                email: text('email'),
                ...(text('name') && { name: text('name') }),
                ...(text('plan') && { plan: text('plan') }),
              },
            })
            form.reset()
            if (!invitation.mailed) setHandOver(invitation)
            props.onInvited(invitation)
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <Field
          label={t('app.admin.users.invite.email')}
          name="email"
          type="email"
          autocomplete="off"
          required
          hint={t('app.admin.users.invite.emailHint')}
          error={fieldError(error, 'email')}
        />
        <Field
          label={t('app.admin.users.invite.name')}
          name="name"
          autocomplete="off"
          hint={t('app.admin.users.invite.nameHint')}
          error={fieldError(error, 'name')}
        />
        <Field
          label={t('app.admin.users.invite.plan')}
          name="plan"
          autocomplete="off"
          hint={t('app.admin.users.invite.planHint')}
          error={fieldError(error, 'plan')}
        />
        <FormError
          error={['email', 'name', 'plan'].some((f) => fieldError(error, f)) ? null : error}
        />
        <button type="submit" class="button primary" disabled={busy}>
          {t('app.admin.users.invite.submit')}
        </button>
      </form>
      {handOver?.url && (
        <div class="callout">
          <p>{t('app.admin.users.invite.noMail', { name: handOver.user.name })}</p>
          <CopyField
            label={t('app.admin.users.invite.link')}
            text={handOver.url}
            buttonLabel={t('app.admin.users.copyLink')}
          />
          <p class="hint">
            {t('app.admin.users.worksOnceUntil')} <When iso={handOver.expiresAt} />.
          </p>
        </div>
      )}
    </details>
  )
}
