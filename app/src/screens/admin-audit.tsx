import { AdminNav, OperatorsOnly } from '../components/admin-nav.tsx'
import { Field } from '../components/form.tsx'
import { kindNames, SecurityEventList } from '../components/security-log.tsx'
import { t } from '../i18n.ts'
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
      <h1>{t('app.admin.audit.title')}</h1>
      <AdminNav />
      <p>{t('app.admin.audit.what')}</p>
      <form
        class="inline-form"
        aria-label={t('app.admin.audit.narrow')}
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
          label={t('app.admin.audit.account')}
          name="userId"
          defaultValue={userId}
          maxLength={100}
          autocomplete="off"
          hint={t('app.admin.audit.accountHint')}
        />
        <div class="field">
          <label for="audit-kind">{t('app.admin.audit.kind')}</label>
          <select id="audit-kind" name="kind" defaultValue={kind}>
            <option value="">{t('app.admin.audit.everyKind')}</option>
            {kindNames().map(([k, name]) => (
              <option key={k} value={k}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" class="button primary">
          {t('app.admin.audit.show')}
        </button>
      </form>
      <SecurityEventList
        path={`/v1/admin/audit?${api}`}
        label={t('app.admin.audit.list')}
        showUser
      />
    </>
  )
}
