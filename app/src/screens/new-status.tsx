import { useState } from 'preact/hooks'
import { api, apiPath } from '../api.ts'
import { Field, FormError, fieldError } from '../components/form.tsx'
import {
  ACCESS_OPTIONS,
  Choice,
  ColourPicker,
  PaletteEditor,
  paletteErrorsOf,
  TextAreaField,
} from '../components/status-fields.tsx'
import { t } from '../i18n.ts'
import { publish } from '../live.ts'
import { Link, navigate } from '../router.tsx'
import type { PaletteEntry, Status } from '../types.ts'

// A new status (docs/app.md#a-new-status): created with POST /v1/status-keys/:key and
// `If-None-Match: *`, so an existing status of the same key is never overwritten (412).
// Every message is the API's own, shown at its field. The palette is made here too (README's
// first status has one), with the status screen's editor.

export default function NewStatus() {
  const [name, setName] = useState('')
  const [key, setKey] = useState('')
  const [keyEdited, setKeyEdited] = useState(false)
  const [value, setValue] = useState('')
  const [colorNo, setColorNo] = useState(1)
  // a colour the person picked wins; otherwise a value found in the palette takes its colour
  // there (docs/app.md#value-palette), as it does for every later write
  const [colourPicked, setColourPicked] = useState(false)
  const [palette, setPalette] = useState<PaletteEntry[]>([])
  const [description, setDescription] = useState('')
  const [accessType, setAccessType] = useState<'private' | 'public'>('private')
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const keyOf = (text: string) =>
    text
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 100)

  const keyError = (): string | undefined => {
    if (!error || typeof error !== 'object') return undefined
    const e = error as { errorCode?: string; status?: number; message?: string }
    if (e.errorCode === 'invalidStatusKey' || e.status === 412) return e.message
    return fieldError(error, 'statusKey')
  }

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    const body: Record<string, unknown> = { name, description, accessType }
    if (value !== '') body.value = value
    if (palette.length > 0) body.palette = palette
    const fromPalette = !colourPicked && palette.some((entry) => entry.value === value)
    if (!fromPalette) body.colorNo = colorNo
    try {
      const status = await api<Status>('POST', apiPath`/v1/status-keys/${key}`, {
        body,
        headers: { 'if-none-match': '*' },
      })
      publish(status)
      navigate(`/statuses/${encodeURIComponent(status.id)}`)
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }

  const paletteErrors = paletteErrorsOf(error)
  const formLevel =
    error &&
    !['name', 'value', 'colorNo', 'description', 'accessType'].some((f) => fieldError(error, f)) &&
    paletteErrors.length === 0 &&
    !keyError()

  return (
    <>
      <h1>{t('app.newStatus.title')}</h1>
      <form class="status-form" onSubmit={submit} noValidate>
        {formLevel && <FormError error={error} />}
        <Field
          label={t('app.newStatus.name')}
          value={name}
          required
          maxLength={42}
          onInput={(event) => {
            const text = event.currentTarget.value
            setName(text)
            if (!keyEdited) setKey(keyOf(text))
          }}
          error={fieldError(error, 'name')}
        />
        <Field
          label={t('app.newStatus.key')}
          hint={t('app.newStatus.keyHint')}
          value={key}
          required
          onInput={(event) => {
            setKey(event.currentTarget.value)
            setKeyEdited(true)
          }}
          error={keyError()}
        />
        <Field
          label={t('app.newStatus.value')}
          hint={t('app.newStatus.valueHint')}
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
          error={fieldError(error, 'value')}
        />
        <ColourPicker
          legend={t('app.newStatus.colour')}
          name="colorNo"
          value={colorNo}
          onChange={(n) => {
            setColorNo(n)
            setColourPicked(true)
          }}
          error={fieldError(error, 'colorNo')}
        />
        <PaletteEditor palette={palette} onChange={setPalette} errors={paletteErrors} />
        <TextAreaField
          label={t('app.newStatus.description')}
          value={description}
          onInput={(event) => setDescription(event.currentTarget.value)}
          error={fieldError(error, 'description')}
        />
        <Choice
          legend={t('app.newStatus.access')}
          name="accessType"
          value={accessType}
          options={ACCESS_OPTIONS}
          onChange={setAccessType}
          error={fieldError(error, 'accessType')}
        />
        <div class="actions">
          <button type="submit" class="button primary" disabled={busy}>
            {t('app.newStatus.submit')}
          </button>
          <Link href="/" class="button quiet">
            {t('app.newStatus.cancel')}
          </Link>
        </div>
      </form>
    </>
  )
}
