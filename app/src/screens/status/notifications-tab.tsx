import { useEffect, useState } from 'preact/hooks'
import { api, apiPath } from '../../api.ts'
import { FormError, fieldError } from '../../components/form.tsx'
import { t } from '../../i18n.ts'
import { isMissingRoute } from '../../notifications/channels.ts'
import { Link } from '../../router.tsx'
import type { Channel } from '../../types.ts'
import type { StatusTabProps } from './tab-props.ts'

// A status's Notifications tab (docs/app.md#notifications-in-the-app): my rule for this
// status — when I am told (any change, changes to or leaving chosen values, stale, or off),
// whether my own changes count, and on which of my channels (docs/notifications.md#rules).

/** `when` as the API takes it (GET|PUT /v1/status/:id/notifications). */
type When = 'any' | 'stale' | { changesTo?: string[]; leaves?: string[] }
interface Rule {
  statusId: string
  when: When | null
  channels: string[] | null
  byOthers: boolean
}

type Kind = 'off' | 'any' | 'values' | 'stale'

const kinds = (): { kind: Kind; label: string }[] => [
  { kind: 'any', label: t('app.status.notifications.kinds.any') },
  { kind: 'values', label: t('app.status.notifications.kinds.values') },
  { kind: 'stale', label: t('app.status.notifications.kinds.stale') },
  { kind: 'off', label: t('app.status.notifications.kinds.off') },
]

const kindOf = (when: When | null): Kind =>
  when === null ? 'off' : typeof when === 'string' ? when : 'values'

const listOf = (when: When | null, part: 'changesTo' | 'leaves'): string[] =>
  when && typeof when === 'object' ? (when[part] ?? []) : []

/** The values typed one per line, trimmed, without blanks or repeats. */
const linesOf = (text: string): string[] => [
  ...new Set(
    text
      .split('\n')
      .map((v) => v.trim())
      .filter(Boolean),
  ),
]

/**
 * One side of a values rule ("changes to" or "leaves"): the palette's values as checkboxes,
 * and any other values one per line.
 */
function ValuePicker(props: {
  id: string
  legend: string
  palette: readonly string[]
  picked: readonly string[]
  onPick: (picked: string[]) => void
  other: string
  onOther: (text: string) => void
  invalid: boolean
}) {
  return (
    <fieldset class="value-picker">
      <legend>{props.legend}</legend>
      {props.palette.map((value) => (
        <label key={value} class="check">
          <input
            type="checkbox"
            checked={props.picked.includes(value)}
            onChange={(event) =>
              props.onPick(
                event.currentTarget.checked
                  ? [...props.picked, value]
                  : props.picked.filter((v) => v !== value),
              )
            }
          />
          <span>{value}</span>
        </label>
      ))}
      <div class="field">
        <label for={props.id}>
          {props.palette.length > 0
            ? t('app.status.notifications.otherValues')
            : t('app.status.notifications.values')}
        </label>
        <textarea
          id={props.id}
          rows={2}
          value={props.other}
          onInput={(event) => props.onOther(event.currentTarget.value)}
          aria-invalid={props.invalid ? 'true' : undefined}
        />
      </div>
    </fieldset>
  )
}

export default function NotificationsTab(props: StatusTabProps) {
  const statusId = props.status.id
  const palette = (props.status.palette ?? []).map((p) => p.value)
  const [rule, setRule] = useState<Rule | null>(null)
  const [channels, setChannels] = useState<Channel[]>([])
  const [loadError, setLoadError] = useState<unknown>(null)
  const [error, setError] = useState<unknown>(null)
  const [kind, setKind] = useState<Kind>('off')
  const [toPicked, setToPicked] = useState<string[]>([])
  const [toOther, setToOther] = useState('')
  const [leavesPicked, setLeavesPicked] = useState<string[]>([])
  const [leavesOther, setLeavesOther] = useState('')
  const [byOthers, setByOthers] = useState(false)
  const [some, setSome] = useState(false)
  const [picked, setPicked] = useState<string[]>([])
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState('')

  const show = (r: Rule) => {
    setRule(r)
    setKind(kindOf(r.when))
    const to = listOf(r.when, 'changesTo')
    const leaves = listOf(r.when, 'leaves')
    setToPicked(to.filter((v) => palette.includes(v)))
    setToOther(to.filter((v) => !palette.includes(v)).join('\n'))
    setLeavesPicked(leaves.filter((v) => palette.includes(v)))
    setLeavesOther(leaves.filter((v) => !palette.includes(v)).join('\n'))
    setByOthers(r.byOthers)
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
        {t('app.status.notifications.missing')}
      </p>
    )
  if (loadError) return <FormError error={loadError} />
  if (!rule) return <p class="loading">{t('app.status.loading')}</p>

  // the palette's values first, in its order, then the others as typed
  const changesTo = [
    ...new Set([...palette.filter((v) => toPicked.includes(v)), ...linesOf(toOther)]),
  ]
  const leaves = [
    ...new Set([...palette.filter((v) => leavesPicked.includes(v)), ...linesOf(leavesOther)]),
  ]
  const valuesInvalid = fieldError(error, 'when') !== undefined

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
            show({ statusId, when: null, channels: null, byOthers: false })
            setNotice(t('app.status.notifications.off'))
          } else {
            if (kind === 'values' && changesTo.length === 0 && leaves.length === 0)
              throw new Error(t('app.status.notifications.chooseValue'))
            const when: When =
              kind === 'values'
                ? {
                    ...(changesTo.length > 0 && { changesTo }),
                    ...(leaves.length > 0 && { leaves }),
                  }
                : kind
            const saved = await api<Rule>('PUT', apiPath`/v1/status/${statusId}/notifications`, {
              body: {
                when,
                channels: some ? picked : null,
                ...(kind !== 'stale' && byOthers && { byOthers: true }),
              },
            })
            show(saved)
            setNotice(t('app.status.notifications.saved'))
          }
        } catch (e) {
          setError(e)
        } finally {
          setBusy(false)
        }
      }}
    >
      <fieldset>
        <legend>{t('app.status.notifications.tellMe')}</legend>
        {kinds().map((k) => (
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
      {kind === 'values' && (
        <>
          <ValuePicker
            id="rule-changes-to"
            legend={t('app.status.notifications.changesTo')}
            palette={palette}
            picked={toPicked}
            onPick={setToPicked}
            other={toOther}
            onOther={setToOther}
            invalid={valuesInvalid}
          />
          <ValuePicker
            id="rule-leaves"
            legend={t('app.status.notifications.leaves')}
            palette={palette}
            picked={leavesPicked}
            onPick={setLeavesPicked}
            other={leavesOther}
            onOther={setLeavesOther}
            invalid={valuesInvalid}
          />
          <p class="hint">{t('app.status.notifications.either')}</p>
        </>
      )}
      {(kind === 'any' || kind === 'values') && (
        <label class="check">
          <input
            type="checkbox"
            checked={byOthers}
            onChange={(event) => setByOthers(event.currentTarget.checked)}
          />
          <span>{t('app.status.notifications.byOthers')}</span>
        </label>
      )}
      {kind !== 'off' && (
        <fieldset>
          <legend>{t('app.status.notifications.channels')}</legend>
          <label class="check">
            <input type="radio" name="which" checked={!some} onChange={() => setSome(false)} />
            <span>{t('app.status.notifications.allChannels')}</span>
          </label>
          <label class="check">
            <input type="radio" name="which" checked={some} onChange={() => setSome(true)} />
            <span>{t('app.status.notifications.onlyThese')}</span>
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
              {t('app.status.notifications.noChannelsBefore')}{' '}
              <Link href="/notifications">{t('app.status.notifications.noChannelsLink')}</Link>{' '}
              {t('app.status.notifications.noChannelsAfter')}
            </p>
          )}
        </fieldset>
      )}
      <FormError error={error} />
      <p class="notice" aria-live="polite">
        {notice}
      </p>
      <button type="submit" class="button primary" disabled={busy}>
        {t('app.status.notifications.save')}
      </button>
      <p>
        <Link href="/notifications">{t('app.status.notifications.manage')}</Link>
      </p>
    </form>
  )
}
