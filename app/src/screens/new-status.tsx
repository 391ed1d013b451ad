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
      <h1>New status</h1>
      <form class="status-form" onSubmit={submit} noValidate>
        {formLevel && <FormError error={error} />}
        <Field
          label="Name"
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
          label="Key"
          hint="How your scripts and devices name it in the API (letters, digits, - . _ ~)."
          value={key}
          required
          onInput={(event) => {
            setKey(event.currentTarget.value)
            setKeyEdited(true)
          }}
          error={keyError()}
        />
        <Field
          label="Value"
          hint="1 to 10 characters, for example FREE or 42. You may leave it empty for now. A value of the palette below takes its colour there."
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
          error={fieldError(error, 'value')}
        />
        <ColourPicker
          legend="Colour"
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
          label="Description"
          value={description}
          onInput={(event) => setDescription(event.currentTarget.value)}
          error={fieldError(error, 'description')}
        />
        <Choice
          legend="Who may see it"
          name="accessType"
          value={accessType}
          options={ACCESS_OPTIONS}
          onChange={setAccessType}
          error={fieldError(error, 'accessType')}
        />
        <div class="actions">
          <button type="submit" class="button primary" disabled={busy}>
            Create status
          </button>
          <Link href="/" class="button quiet">
            Cancel
          </Link>
        </div>
      </form>
    </>
  )
}
