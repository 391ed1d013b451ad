import { useEffect, useState } from 'preact/hooks'
import { api, apiPath } from '../../api.ts'
import { FormError, fieldError } from '../../components/form.tsx'
import { isMissingRoute } from '../../notifications/channels.ts'
import { Link } from '../../router.tsx'
import type { Channel } from '../../types.ts'
import type { StatusTabProps } from './tab-props.ts'

// A status's Notifications tab (docs/app.md#notifications-in-the-app): my rule for this
// status — when I am told (any change, changes to values, leaves values, stale, or off) and
// on which of my channels (docs/notifications.md#rules).

/** `when` as the API takes it (GET|PUT /v1/status/:id/notifications). */
type When = 'any' | 'stale' | { changesTo: string[] } | { leaves: string[] }
interface Rule {
  statusId: string
  when: When | null
  channels: string[] | null
}

type Kind = 'off' | 'any' | 'changesTo' | 'leaves' | 'stale'

const KINDS: { kind: Kind; label: string }[] = [
  { kind: 'any', label: 'Any change of its value' },
  { kind: 'changesTo', label: 'When it changes to one of these values' },
  { kind: 'leaves', label: 'When it leaves one of these values' },
  { kind: 'stale', label: 'When it goes stale (no update for its stale time)' },
  { kind: 'off', label: 'Off: never' },
]

const kindOf = (when: When | null): Kind =>
  when === null
    ? 'off'
    : typeof when === 'string'
      ? when
      : 'changesTo' in when
        ? 'changesTo'
        : 'leaves'

const valuesOf = (when: When | null): string[] =>
  when && typeof when === 'object' ? ('changesTo' in when ? when.changesTo : when.leaves) : []

export default function NotificationsTab(props: StatusTabProps) {
  const statusId = props.status.id
  const palette = props.status.palette ?? []
  const [rule, setRule] = useState<Rule | null>(null)
  const [channels, setChannels] = useState<Channel[]>([])
  const [loadError, setLoadError] = useState<unknown>(null)
  const [error, setError] = useState<unknown>(null)
  const [kind, setKind] = useState<Kind>('off')
  const [values, setValues] = useState('')
  const [some, setSome] = useState(false)
  const [picked, setPicked] = useState<string[]>([])
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState('')

  const show = (r: Rule) => {
    setRule(r)
    setKind(kindOf(r.when))
    setValues(valuesOf(r.when).join('\n'))
    setSome(r.channels !== null)
    setPicked(r.channels ?? [])
  }
  useEffect(() => {
    api<Rule>('GET', apiPath`/v1/status/${statusId}/notifications`).then(show, setLoadError)
    api<Channel[]>('GET', '/v1/user/channels').then(setChannels, () => setChannels([]))
  }, [statusId])

  if (isMissingRoute(loadError))
    return (
      <p class="notice" role="status">
        This server does not offer notification rules yet.
      </p>
    )
  if (loadError) return <FormError error={loadError} />
  if (!rule) return <p class="loading">Loading…</p>

  const valueList = values
    .split('\n')
    .map((v) => v.trim())
    .filter(Boolean)
  const needsValues = kind === 'changesTo' || kind === 'leaves'

  return (
    <form
      class="rule-form"
      onSubmit={async (event) => {
        event.preventDefault()
        setBusy(true)
        setError(null)
        setNotice('')
        try {
          if (kind === 'off') {
            await api('DELETE', apiPath`/v1/status/${statusId}/notifications`)
            show({ statusId, when: null, channels: null })
            setNotice('Notifications for this status are off.')
          } else {
            const when: When =
              kind === 'changesTo'
                ? { changesTo: valueList }
                : kind === 'leaves'
                  ? { leaves: valueList }
                  : kind
            const saved = await api<Rule>('PUT', apiPath`/v1/status/${statusId}/notifications`, {
              body: { when, channels: some ? picked : null },
            })
            show(saved)
            setNotice('Saved: you will be notified as chosen.')
          }
        } catch (e) {
          setError(e)
        } finally {
          setBusy(false)
        }
      }}
    >
      <fieldset>
        <legend>Tell me</legend>
        {KINDS.map((k) => (
          <label key={k.kind} class="check">
            <input
              type="radio"
              name="when"
              value={k.kind}
              checked={kind === k.kind}
              onChange={() => setKind(k.kind)}
            />
            <span>{k.label}</span>
          </label>
        ))}
      </fieldset>
      {needsValues && (
        <div class="field">
          <label for="rule-values">Values, one per line</label>
          <textarea
            id="rule-values"
            rows={3}
            value={values}
            onInput={(event) => setValues(event.currentTarget.value)}
            aria-invalid={fieldError(error, 'when') ? 'true' : undefined}
            aria-describedby={palette.length > 0 ? 'rule-values-hint' : undefined}
          />
          {palette.length > 0 && (
            <p class="hint" id="rule-values-hint">
              This status’s palette: {palette.map((p) => p.value).join(', ')}
            </p>
          )}
        </div>
      )}
      {kind !== 'off' && (
        <fieldset>
          <legend>On which channels</legend>
          <label class="check">
            <input type="radio" name="which" checked={!some} onChange={() => setSome(false)} />
            <span>All my channels</span>
          </label>
          <label class="check">
            <input type="radio" name="which" checked={some} onChange={() => setSome(true)} />
            <span>Only these</span>
          </label>
          {some &&
            channels.map((c) => (
              <label key={c.id} class="check indent">
                <input
                  type="checkbox"
                  checked={picked.includes(c.id)}
                  onChange={(event) =>
                    setPicked(
                      event.currentTarget.checked
                        ? [...picked, c.id]
                        : picked.filter((id) => id !== c.id),
                    )
                  }
                />
                <span>
                  {c.name} ({c.type})
                </span>
              </label>
            ))}
          {channels.length === 0 && (
            <p class="hint">
              You have no channels yet: <Link href="/notifications">add one</Link> to be told
              anywhere.
            </p>
          )}
        </fieldset>
      )}
      <FormError error={error} />
      <p class="notice" aria-live="polite">
        {notice}
      </p>
      <button type="submit" class="button primary" disabled={busy}>
        Save
      </button>
      <p>
        <Link href="/notifications">Manage your channels</Link>
      </p>
    </form>
  )
}
