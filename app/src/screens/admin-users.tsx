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
      <h1>Users</h1>
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
              ? `${invitation.user.name} was invited: a link was mailed to ${invitation.user.email}.`
              : `${invitation.user.name} was invited: hand them the link below.`,
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
          label="Find a user"
          hint="Part of a name or an e-mail address."
          type="search"
          name="q"
          value={query}
          onInput={(event) => setQuery(event.currentTarget.value)}
        />
        <button type="submit" class="button">
          Search
        </button>
      </form>

      <h2>{q ? `Users matching “${q}”` : 'Every user'}</h2>
      <FormError error={error} />
      {users === null && !error && <p class="loading">Loading…</p>}
      <p class="muted" aria-live="polite">
        {users &&
          (users.length === 0
            ? q
              ? 'Nobody matches.'
              : 'No users yet.'
            : `${users.length}${next ? '+' : ''} ${users.length === 1 && !next ? 'user' : 'users'}.`)}
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
            Show more users
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
        <span class="muted">{user.email ?? 'no e-mail address'}</span>{' '}
        {user.admin && <span class="badge">operator</span>}{' '}
        {user.disabled && <span class="badge">disabled</span>}{' '}
        {user.authLevel !== 'verified' && <span class="badge">not verified</span>}
      </div>
      <dl class="facts">
        <dt>Plan</dt>
        <dd>{user.plan}</dd>
        <dt>Address</dt>
        <dd>{user.email === null ? '—' : user.emailVerified ? 'confirmed' : 'not confirmed'}</dd>
        <dt>Statuses</dt>
        <dd>{user.statusCount}</dd>
        <dt>Joined</dt>
        <dd>
          <When iso={user.createdAt} />
        </dd>
        <dt>Last signed in</dt>
        <dd>
          <When iso={user.lastSignInAt} never="never" />
        </dd>
        {user.disabledAt && (
          <>
            <dt>Disabled</dt>
            <dd>
              <When iso={user.disabledAt} />
            </dd>
          </>
        )}
      </dl>
      <details class="panel">
        <summary>
          Manage <span class="sr-only">{user.name}</span>
        </summary>
        <form
          class="inline-form"
          aria-label={`Plan of ${user.name}`}
          onSubmit={(event) => {
            event.preventDefault()
            const plan = String(new FormData(event.currentTarget).get('plan') ?? '').trim()
            if (plan && plan !== user.plan)
              void act({ plan }, `${user.name} is on the plan ${plan} now.`)
          }}
        >
          <Field
            label="Plan"
            name="plan"
            defaultValue={user.plan}
            required
            error={fieldError(error, 'plan')}
          />
          <button type="submit" class="button" disabled={busy}>
            Change plan
          </button>
        </form>
        <div class="actions">
          {user.authLevel === 'verified' ? (
            <button
              type="button"
              class="button"
              disabled={busy}
              onClick={() =>
                act({ verified: false }, `${user.name} is not verified: they cannot write now.`)
              }
            >
              Unverify
            </button>
          ) : (
            <button
              type="button"
              class="button"
              disabled={busy}
              onClick={() => act({ verified: true }, `${user.name} is verified now.`)}
            >
              Verify
            </button>
          )}
          {user.disabled ? (
            <button
              type="button"
              class="button"
              disabled={busy}
              onClick={() =>
                act({ disabled: false }, `${user.name} is enabled: they can sign in again.`)
              }
            >
              Enable
            </button>
          ) : self ? null : (
            <ConfirmButton
              label="Disable"
              ariaLabel={`Disable ${user.name}`}
              title={`Disable ${user.name}?`}
              confirmLabel="Disable the account"
              disabled={busy}
              onConfirm={() =>
                change(
                  { disabled: true },
                  `${user.name} is disabled: signed out everywhere, their keys refused.`,
                )
              }
            >
              <p>
                They are signed out everywhere, cannot sign in, and their API keys are refused until
                an operator enables the account again. Nothing of theirs is deleted.
              </p>
            </ConfirmButton>
          )}
          {!self &&
            (user.admin ? (
              <ConfirmButton
                label="Remove operator"
                ariaLabel={`Remove operator: ${user.name}`}
                title={`Remove ${user.name} as an operator?`}
                confirmLabel="Remove operator"
                buttonClass=""
                onConfirm={() => change({ admin: false }, `${user.name} is no operator now.`)}
              >
                <p>They lose these screens and the admin API; their keys lose the scope admin.</p>
              </ConfirmButton>
            ) : (
              <ConfirmButton
                label="Make operator"
                ariaLabel={`Make operator: ${user.name}`}
                title={`Make ${user.name} an operator?`}
                confirmLabel="Make operator"
                buttonClass=""
                onConfirm={() => change({ admin: true }, `${user.name} is an operator now.`)}
              >
                <p>They can see and change every user, the instance and its backups, as you can.</p>
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
            Make a sign-in link
          </button>
          {!self && (
            <ConfirmButton
              label="Delete"
              ariaLabel={`Delete ${user.name}`}
              title={`Delete ${user.name}?`}
              confirmLabel="Delete the account"
              onConfirm={async () => {
                await api('DELETE', apiPath`/v1/admin/users/${user.id}`)
                props.onDeleted(`${user.name} was deleted.`)
              }}
            >
              <p>
                Their account, keys, sessions and the statuses they own are deleted. This cannot be
                undone.
              </p>
            </ConfirmButton>
          )}
        </div>
        <FormError error={fieldError(error, 'plan') ? null : error} />
        {link && (
          <div class="callout">
            <CopyField label="Sign-in link" text={link.url} buttonLabel="Copy the link" />
            <p class="hint">
              Works once, until <When iso={link.expiresAt} />. Hand it to {user.name} yourself:
              whoever opens it is signed in as them.
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
      <summary>Invite someone</summary>
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
          label="E-mail address"
          name="email"
          type="email"
          autocomplete="off"
          required
          hint="Their account is made now; a link to sign in is mailed to this address (with e-mail set up), whatever sign-up allows."
          error={fieldError(error, 'email')}
        />
        <Field
          label="Name (optional)"
          name="name"
          autocomplete="off"
          hint="Others see it; they can change it. Without one, the address's part before the @."
          error={fieldError(error, 'name')}
        />
        <Field
          label="Plan (optional)"
          name="plan"
          autocomplete="off"
          hint="Without one, the plan people who sign up start on."
          error={fieldError(error, 'plan')}
        />
        <FormError
          error={['email', 'name', 'plan'].some((f) => fieldError(error, f)) ? null : error}
        />
        <button type="submit" class="button primary" disabled={busy}>
          Invite
        </button>
      </form>
      {handOver?.url && (
        <div class="callout">
          <p>This service sends no e-mail: hand the link to {handOver.user.name} yourself.</p>
          <CopyField label="Invitation link" text={handOver.url} buttonLabel="Copy the link" />
          <p class="hint">
            Works once, until <When iso={handOver.expiresAt} />.
          </p>
        </div>
      )}
    </details>
  )
}
