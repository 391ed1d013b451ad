import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, api, apiPath } from '../../api.ts'
import { Field, FormError, fieldError } from '../../components/form.tsx'
import {
  LastChange,
  PendingEnd,
  StaleMark,
  ValueButtons,
  ValueChip,
} from '../../components/status-bits.tsx'
import {
  ACCESS_OPTIONS,
  Choice,
  ColourPicker,
  LEVEL_OPTIONS,
  PaletteEditor,
  paletteErrorsOf,
  TextAreaField,
} from '../../components/status-fields.tsx'
import { StatusKey } from '../../components/status-key.tsx'
import { t } from '../../i18n.ts'
import { maySetValue } from '../../my-statuses.ts'
import { navigate } from '../../router.tsx'
import type { PaletteEntry, Staleness, Status } from '../../types.ts'
import type { StatusTabProps } from './tab-props.ts'

// A status's first tab (docs/app.md#a-status): the value (one tap on the palette sets it),
// and for the owner every setting, the palette editor and deletion. An updater may set the
// value only, so that is all the form offers them; a follower reads.

export default function Overview({ status, role, onChange }: StatusTabProps) {
  return (
    <>
      <div class="status-now">
        <p class="status-value">
          <ValueChip value={status.value} colorNo={status.colorNo} class="big" />
          <StaleMark status={status} />
        </p>
        <PendingEnd status={status} />
        <p class="muted">
          {t('app.status.overview.valueSet')} <LastChange at={status.valueUpdatedAt} />
          {status.changeCount > 0 &&
            ` · ${t('app.status.overview.changes', { count: status.changeCount })}`}
          {/* null: the user list is not mine to see (docs/app.md#the-status-screen) */}
          {typeof status.subscriberCount === 'number' &&
            ` · ${t('app.status.overview.subscribers', { count: status.subscriberCount })}`}
        </p>
        {status.description && <p class="status-description">{status.description}</p>}
        {maySetValue(role) && (
          <ValueButtons
            status={status}
            label={t('app.status.overview.setLabel', { name: status.name })}
          />
        )}
      </div>
      {role === 'owner' && <StatusKey status={status} />}
      {role === 'owner' && <EditForm status={status} onChange={onChange} />}
      {role === 'updater' && <ValueForm status={status} onChange={onChange} />}
      {role === 'owner' && <DeleteStatus status={status} />}
    </>
  )
}

/** An updater's form: the value, nothing else (the API would refuse the rest). */
function ValueForm({ status, onChange }: Pick<StatusTabProps, 'status' | 'onChange'>) {
  const [value, setValue] = useState(status.value ?? '')
  const [error, setError] = useState<unknown>(null)
  const [saved, setSaved] = useState(false)
  return (
    <form
      class="status-form"
      noValidate
      onSubmit={async (event) => {
        event.preventDefault()
        setError(null)
        setSaved(false)
        try {
          onChange(
            await api<Status>('PATCH', apiPath`/v1/status/${status.id}`, { body: { value } }),
          )
          setSaved(true)
        } catch (err) {
          setError(err)
        }
      }}
    >
      <h2>{t('app.status.overview.valueForm.title')}</h2>
      {error && !fieldError(error, 'value') && <FormError error={error} />}
      <Field
        label={t('app.status.overview.fields.value')}
        value={value}
        onInput={(event) => setValue(event.currentTarget.value)}
        error={fieldError(error, 'value')}
      />
      <div class="actions">
        <button type="submit" class="button primary">
          {t('app.status.overview.valueForm.submit')}
        </button>
        <span aria-live="polite">{saved ? t('app.status.overview.saved') : ''}</span>
      </div>
    </form>
  )
}

type Draft = {
  name: string
  value: string
  colorNo: number
  description: string
  accessType: Status['accessType']
  accessTypeUserList: Status['accessTypeUserList']
  accessTypeHistory: Status['accessTypeHistory']
  listed: boolean
  palette: PaletteEntry[]
  staleAfter?: string
}

const draftOf = (status: Status): Draft => {
  const draft: Draft = {
    name: status.name,
    value: status.value ?? '',
    colorNo: status.colorNo,
    description: status.description,
    accessType: status.accessType,
    accessTypeUserList: status.accessTypeUserList,
    accessTypeHistory: status.accessTypeHistory,
    listed: status.listed,
    palette: status.palette.map((e) => ({ ...e })),
  }
  const { staleAfter } = status as Status & Staleness
  // staleness is offered where the API has it (docs/notifications.md#staleness)
  if (staleAfter !== undefined)
    draft.staleAfter = staleAfter === null ? '' : String(Math.round(staleAfter / 60))
  return draft
}

/** The request body: the fields that differ from the status (a PATCH changes only those). */
function changes(status: Status, draft: Draft): Record<string, unknown> {
  const before = draftOf(status)
  const body: Record<string, unknown> = {}
  for (const key of [
    'name',
    'colorNo',
    'description',
    'accessType',
    'accessTypeUserList',
    'accessTypeHistory',
    'listed',
  ] as const)
    if (draft[key] !== before[key]) body[key] = draft[key]
  if (draft.value !== before.value) body.value = draft.value
  if (JSON.stringify(draft.palette) !== JSON.stringify(before.palette)) body.palette = draft.palette
  if (draft.staleAfter !== undefined && draft.staleAfter !== before.staleAfter) {
    const minutes = draft.staleAfter.trim()
    // minutes on screen, seconds in the API; a value that is no number goes as it is, so
    // the API's own message says what is wrong with it
    body.staleAfter = minutes === '' ? null : /^\d+$/.test(minutes) ? Number(minutes) * 60 : minutes
  }
  return body
}

function EditForm({ status, onChange }: Pick<StatusTabProps, 'status' | 'onChange'>) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(status))
  const [error, setError] = useState<unknown>(null)
  const [saved, setSaved] = useState('')
  const [busy, setBusy] = useState(false)
  // a change made elsewhere reaches the fields nobody is editing here
  const last = useRef(status)
  useEffect(() => {
    const before = draftOf(last.current)
    const after = draftOf(status)
    last.current = status
    setDraft((d) => {
      const next = { ...d }
      for (const key of Object.keys(after) as (keyof Draft)[])
        if (JSON.stringify(d[key]) === JSON.stringify(before[key]))
          (next as Record<string, unknown>)[key] = after[key]
      return next
    })
  }, [status])
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft((d) => ({ ...d, [key]: value }))
  const at = (field: string) => fieldError(error, field)
  const known = [
    'name',
    'value',
    'colorNo',
    'description',
    'accessType',
    'accessTypeUserList',
    'accessTypeHistory',
    'listed',
    'staleAfter',
  ]
  const paletteErrors = paletteErrorsOf(error)
  const formLevel =
    error &&
    !(
      error instanceof ApiError &&
      error.errors.length > 0 &&
      error.errors.every((e) => known.includes(e.field) || e.field.startsWith('palette'))
    )

  return (
    <form
      class="status-form"
      noValidate
      onSubmit={async (event) => {
        event.preventDefault()
        setError(null)
        setSaved('')
        const body = changes(status, draft)
        if (Object.keys(body).length === 0) {
          setSaved(t('app.status.overview.nothingToSave'))
          return
        }
        setBusy(true)
        try {
          const answer = await api<Status>('PATCH', apiPath`/v1/status/${status.id}`, { body })
          last.current = answer
          setDraft(draftOf(answer))
          onChange(answer)
          setSaved(t('app.status.overview.saved'))
        } catch (err) {
          setError(err)
        } finally {
          setBusy(false)
        }
      }}
    >
      <h2>{t('app.status.overview.settings')}</h2>
      {formLevel && <FormError error={error} />}
      {error instanceof ApiError && !formLevel && (
        <p class="form-error" role="alert">
          {t('app.status.overview.seeFields', { message: error.message })}
        </p>
      )}
      <Field
        label={t('app.status.overview.fields.name')}
        value={draft.name}
        onInput={(e) => set('name', e.currentTarget.value)}
        error={at('name')}
      />
      <Field
        label={t('app.status.overview.fields.value')}
        value={draft.value}
        onInput={(e) => set('value', e.currentTarget.value)}
        error={at('value')}
      />
      <ColourPicker
        legend={t('app.status.overview.fields.colour')}
        name="colorNo"
        value={draft.colorNo}
        onChange={(n) => set('colorNo', n)}
        error={at('colorNo')}
      />
      <TextAreaField
        label={t('app.status.overview.fields.description')}
        value={draft.description}
        onInput={(e) => set('description', e.currentTarget.value)}
        error={at('description')}
      />
      <PaletteEditor
        palette={draft.palette}
        onChange={(p) => set('palette', p)}
        errors={paletteErrors}
      />
      <Choice
        legend={t('app.status.overview.fields.access')}
        name="accessType"
        value={draft.accessType}
        options={ACCESS_OPTIONS}
        onChange={(v) => set('accessType', v)}
        error={at('accessType')}
      />
      <Choice
        legend={t('app.status.overview.fields.accessHistory')}
        name="accessTypeHistory"
        value={draft.accessTypeHistory}
        options={LEVEL_OPTIONS}
        onChange={(v) => set('accessTypeHistory', v)}
        error={at('accessTypeHistory')}
      />
      <Choice
        legend={t('app.status.overview.fields.accessUserList')}
        name="accessTypeUserList"
        value={draft.accessTypeUserList}
        options={LEVEL_OPTIONS}
        onChange={(v) => set('accessTypeUserList', v)}
        error={at('accessTypeUserList')}
      />
      <div class="field">
        <label class="check">
          <input
            type="checkbox"
            checked={draft.listed}
            onChange={(e) => set('listed', e.currentTarget.checked)}
          />
          {t('app.status.overview.fields.listed')}
        </label>
        {at('listed') && <p class="field-error">{at('listed')}</p>}
      </div>
      {draft.staleAfter !== undefined && (
        <Field
          label={t('app.status.overview.fields.staleAfter')}
          hint={t('app.status.overview.fields.staleAfterHint')}
          inputMode="numeric"
          value={draft.staleAfter}
          onInput={(e) => set('staleAfter', e.currentTarget.value)}
          error={at('staleAfter')}
        />
      )}
      <div class="actions">
        <button type="submit" class="button primary" disabled={busy}>
          {t('app.status.overview.save')}
        </button>
        <span aria-live="polite">{saved}</span>
      </div>
    </form>
  )
}

/** Deleting asks first, in a native dialog (keyboard and screen readers handle it). */
function DeleteStatus({ status }: { status: Status }) {
  const dialog = useRef<HTMLDialogElement>(null)
  const [error, setError] = useState<unknown>(null)
  return (
    <section class="danger-zone" aria-labelledby="delete-heading">
      <h2 id="delete-heading">{t('app.status.overview.delete.title')}</h2>
      <p>{t('app.status.overview.delete.what')}</p>
      <button type="button" class="button danger" onClick={() => dialog.current?.showModal()}>
        {t('app.status.overview.delete.open')}
      </button>
      <dialog ref={dialog} aria-labelledby="delete-title" class="confirm">
        <form
          method="dialog"
          onSubmit={async (event) => {
            const submitter = (event as SubmitEvent).submitter as HTMLButtonElement | null
            if (submitter?.value !== 'delete') return
            event.preventDefault()
            setError(null)
            try {
              await api('DELETE', apiPath`/v1/status/${status.id}`)
              dialog.current?.close()
              navigate('/', { replace: true })
            } catch (err) {
              setError(err)
            }
          }}
        >
          <h2 id="delete-title">
            {t('app.status.overview.delete.confirmTitle', { name: status.name })}
          </h2>
          <p>{t('app.status.overview.delete.undone')}</p>
          <FormError error={error} />
          <div class="actions">
            <button type="submit" value="cancel" class="button" autofocus>
              {t('app.status.overview.delete.cancel')}
            </button>
            <button type="submit" value="delete" class="button danger">
              {t('app.status.overview.delete.confirm')}
            </button>
          </div>
        </form>
      </dialog>
    </section>
  )
}
