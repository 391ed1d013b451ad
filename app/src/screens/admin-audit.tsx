import { AdminNav, OperatorsOnly } from '../components/admin-nav.tsx'
import { Field } from '../components/form.tsx'
import { KIND_NAMES, SecurityEventList } from '../components/security-log.tsx'
import { currentUrl, navigate } from '../router.tsx'
import { me } from '../session.ts'

// The operators' audit log (docs/app.md#audit-log): every account's security events and the
// operators' own actions, newest first, narrowed by account and kind. The filters are in the
// URL, so a narrowed view can be reloaded and shared with another operator.

const PAGE = 50

export function AdminAudit() {
  return (
    <OperatorsOnly>
      <AuditScreen />
    </OperatorsOnly>
  )
}

function AuditScreen() {
  const query = currentUrl.value.searchParams
  const userId = query.get('userId') ?? ''
  const kind = query.get('kind') ?? ''
  if (!me.value) return null
  const api = new URLSearchParams({
    ...(userId && { userId }),
    ...(kind && { kind }),
    limit: String(PAGE),
  })
  return (
    <>
      <h1>Audit log</h1>
      <AdminNav />
      <p>
        What happened to every account, and what operators did, newest first, for 90 days. A failed
        sign-in to an address with no account is listed without the address.
      </p>
      <form
        class="inline-form"
        aria-label="Narrow the audit log"
        onSubmit={(event) => {
          event.preventDefault()
          const data = new FormData(event.currentTarget)
          const next = new URLSearchParams()
          const who = String(data.get('userId') ?? '').trim()
          const what = String(data.get('kind') ?? '')
          if (who) next.set('userId', who)
          if (what) next.set('kind', what)
          const search = next.toString()
          navigate(`/admin/audit${search ? `?${search}` : ''}`)
        }}
      >
        <Field
          label="Account id"
          name="userId"
          defaultValue={userId}
          maxLength={100}
          autocomplete="off"
          hint="Only this account's events (empty: every account)."
        />
        <div class="field">
          <label for="audit-kind">Kind</label>
          <select id="audit-kind" name="kind" defaultValue={kind}>
            <option value="">Every kind</option>
            {Object.entries(KIND_NAMES).map(([k, name]) => (
              <option key={k} value={k}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" class="button primary">
          Show
        </button>
      </form>
      <SecurityEventList
        path={`/v1/admin/audit?${api}`}
        label="Security events of every account, newest first"
        showUser
      />
    </>
  )
}
