import { useEffect, useState } from 'preact/hooks'
import { api, apiPath } from '../api.ts'
import { ConfirmButton } from '../components/confirm.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { SecretOnce } from '../components/secret.tsx'
import { When } from '../components/when.tsx'
import {
  addThisBrowser,
  channelTarget,
  endpointOf,
  isMissingRoute,
  pushSupported,
  thisBrowserEndpoint,
  WEBHOOK_FORMAT_TEXT,
} from '../notifications/channels.ts'
import { SERVICES, serviceConfig } from '../notifications/services.ts'
import type { Channel, DeliveryAttempt, NewChannel, WebhookFormat } from '../types.ts'
import { browserName } from '../user-agent.ts'

// Notifications (docs/app.md#notifications-in-the-app): my channels — a webhook, an e-mail
// address, this browser — with a test button, the delivery log, on/off and delete. Which
// statuses notify me is each status's Notifications tab.

export default function Notifications() {
  const [channels, setChannels] = useState<Channel[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null)
  const [notice, setNotice] = useState('')
  const [endpoint, setEndpoint] = useState<string | null>(null)
  const load = () =>
    api<Channel[]>('GET', '/v1/user/channels').then((list) => {
      setChannels(list)
      setError(null)
    }, setError)
  useEffect(() => {
    load()
    thisBrowserEndpoint().then(setEndpoint, () => setEndpoint(null))
  }, [])
  const thisBrowser = channels?.find((c) => endpoint !== null && endpointOf(c) === endpoint)
  const created = (channel: NewChannel, text: string) => {
    const added = endpointOf(channel)
    if (added) setEndpoint(added)
    if (channel.secret) setSecret({ name: channel.name, secret: channel.secret })
    setNotice(text)
    load()
  }

  if (isMissingRoute(error))
    return (
      <>
        <h1>Notifications</h1>
        <p class="notice" role="status">
          This server does not offer notifications yet. Once it does, your channels and rules appear
          here.
        </p>
      </>
    )

  return (
    <>
      <h1>Notifications</h1>
      <p>
        Channels are where you are told: a webhook, an e-mail address, this browser, or a push or
        chat service (ntfy, Gotify, Pushover, Telegram, Matrix). Which statuses tell you, and when,
        is set on each status’s Notifications tab.
      </p>
      {secret && (
        <SecretOnce
          title="The webhook’s signing secret"
          secret={secret.secret}
          onDone={() => setSecret(null)}
        >
          <p>
            Channel <strong>{secret.name}</strong>. Your receiver checks each request’s signature
            with it (docs: verifying signatures).
          </p>
        </SecretOnce>
      )}
      <p class="notice" aria-live="polite">
        {notice}
      </p>

      <h2>Your channels</h2>
      <FormError error={error} />
      {channels === null && !error && <p class="loading">Loading…</p>}
      {channels && channels.length === 0 && <p>No channels yet: add one below.</p>}
      {channels && channels.length > 0 && (
        <ul class="item-list">
          {channels.map((channel) => (
            <ChannelItem
              key={channel.id}
              channel={channel}
              isThisBrowser={channel.id === thisBrowser?.id}
              onChanged={(text) => {
                setNotice(text)
                load()
              }}
            />
          ))}
        </ul>
      )}

      <h2>Add a channel</h2>
      <div class="panels">
        <AddThisBrowser onCreated={created} added={thisBrowser} />
        <AddWebhook onCreated={created} />
        <AddEmail onCreated={created} />
        <AddService onCreated={created} />
      </div>
    </>
  )
}

function channelState(channel: Channel): string {
  if (!channel.verified) return 'waiting for confirmation'
  if (!channel.enabled) return channel.disabledReason ? 'turned off by statusd' : 'off'
  if (channel.failingSince) return 'failing'
  return 'on'
}

function ChannelItem(props: {
  channel: Channel
  isThisBrowser: boolean
  onChanged: (notice: string) => void
}) {
  const { channel } = props
  const [error, setError] = useState<unknown>(null)
  const [log, setLog] = useState<DeliveryAttempt[] | null>(null)
  const [showLog, setShowLog] = useState(false)
  const [tested, setTested] = useState('')
  const loadLog = () =>
    api<DeliveryAttempt[]>('GET', apiPath`/v1/user/channels/${channel.id}/deliveries`).then(
      (attempts) => {
        setLog(attempts)
        return attempts
      },
      (e: unknown) => {
        setError(e)
        return null
      },
    )
  const name = channel.name
  return (
    <li class="item channel">
      <div class="key-head">
        <strong>{name}</strong> <span class="badge">{channel.type}</span>{' '}
        <span class="badge">{channelState(channel)}</span>
        {props.isThisBrowser && <span class="badge">this browser</span>}
      </div>
      <div class="muted channel-target">{channelTarget(channel)}</div>
      {!channel.verified && (
        <p class="hint">A confirmation link was mailed to the address; follow it to use it.</p>
      )}
      {channel.disabledReason && <p class="hint">{channel.disabledReason}</p>}
      {channel.failingSince && (
        <p class="hint">
          Deliveries have failed since <When iso={channel.failingSince} />.
        </p>
      )}
      <div class="actions">
        <button
          type="button"
          class="button"
          aria-label={`Test ${name}`}
          disabled={!channel.verified}
          onClick={async () => {
            setError(null)
            try {
              const { eventId } = await api<{ eventId: string }>(
                'POST',
                apiPath`/v1/user/channels/${channel.id}/test`,
              )
              setTested('A test notification is on its way; it shows in the delivery log.')
              setShowLog(true)
              // the worker sends it within seconds: the log follows until its attempt is there
              for (let i = 0; i < 30; i++) {
                const attempts = await loadLog()
                if (attempts?.some((a) => a.eventId === eventId)) break
                await new Promise((resolve) => setTimeout(resolve, 1000))
              }
            } catch (e) {
              setError(e)
            }
          }}
        >
          Test
        </button>
        <button
          type="button"
          class="button"
          aria-expanded={showLog}
          aria-controls={`log-${channel.id}`}
          aria-label={`Delivery log of ${name}`}
          onClick={() => {
            if (!showLog) loadLog()
            setShowLog(!showLog)
          }}
        >
          Delivery log
        </button>
        <button
          type="button"
          class="button"
          aria-label={`${channel.enabled ? 'Turn off' : 'Turn on'} ${name}`}
          onClick={async () => {
            setError(null)
            try {
              await api('PATCH', apiPath`/v1/user/channels/${channel.id}`, {
                body: { enabled: !channel.enabled },
              })
              props.onChanged(`${name} was turned ${channel.enabled ? 'off' : 'on'}.`)
            } catch (e) {
              setError(e)
            }
          }}
        >
          {channel.enabled ? 'Turn off' : 'Turn on'}
        </button>
        <ConfirmButton
          label="Delete"
          ariaLabel={`Delete ${name}`}
          title={`Delete the channel ${name}?`}
          confirmLabel="Delete the channel"
          onConfirm={async () => {
            await api('DELETE', apiPath`/v1/user/channels/${channel.id}`)
            props.onChanged(`${name} was deleted.`)
          }}
        >
          <p>Nothing more is delivered to it, and its delivery log goes with it.</p>
        </ConfirmButton>
      </div>
      <p class="notice" aria-live="polite">
        {tested}
      </p>
      <FormError error={error} />
      {showLog && (
        <div id={`log-${channel.id}`} class="delivery-log">
          <div class="actions">
            <button
              type="button"
              class="button quiet"
              aria-label={`Refresh the delivery log of ${name}`}
              onClick={loadLog}
            >
              Refresh
            </button>
          </div>
          {log && log.length === 0 && <p>No deliveries yet.</p>}
          {log && log.length > 0 && (
            <div class="table-scroll">
              <table>
                <caption class="sr-only">The last 100 delivery attempts to {name}</caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Event</th>
                    <th scope="col">Result</th>
                    <th scope="col">Time taken</th>
                  </tr>
                </thead>
                <tbody>
                  {log.map((attempt, i) => (
                    <tr key={`${attempt.eventId}-${i}`}>
                      <td>
                        <When iso={attempt.at} />
                      </td>
                      <td>{attempt.eventType ?? attempt.eventId}</td>
                      <td>
                        {attempt.error === null ? 'delivered' : attempt.error}
                        {attempt.statusCode !== null && ` (HTTP ${attempt.statusCode})`}
                      </td>
                      <td>{attempt.durationMs} ms</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      )}
    </li>
  )
}

type OnCreated = (channel: NewChannel, notice: string) => void

function AddWebhook(props: { onCreated: OnCreated }) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  return (
    <form
      class="panel"
      aria-labelledby="add-webhook"
      onSubmit={async (event) => {
        event.preventDefault()
        const form = event.currentTarget
        const data = new FormData(form)
        const name = String(data.get('name') ?? '')
        setBusy(true)
        setError(null)
        try {
          const channel = await api<NewChannel>('POST', '/v1/user/channels', {
            body: {
              type: 'webhook',
              ...(name && { name }),
              config: {
                url: String(data.get('url') ?? ''),
                format: String(data.get('format') ?? 'standard'),
              },
            },
          })
          form.reset()
          props.onCreated(channel, `Webhook ${channel.name} added.`)
        } catch (e) {
          setError(e)
        } finally {
          setBusy(false)
        }
      }}
    >
      <h3 id="add-webhook">A webhook</h3>
      <Field label="Name" name="name" maxLength={100} error={fieldError(error, 'name')} />
      <Field
        label="URL"
        name="url"
        type="url"
        required
        placeholder="https://"
        error={fieldError(error, 'config.url') ?? fieldError(error, 'config/url')}
      />
      <div class="field">
        <label for="webhook-format">Format</label>
        <select id="webhook-format" name="format">
          {(Object.keys(WEBHOOK_FORMAT_TEXT) as WebhookFormat[]).map((format) => (
            <option key={format} value={format}>
              {WEBHOOK_FORMAT_TEXT[format]}
            </option>
          ))}
        </select>
      </div>
      <FormError error={error} />
      <button type="submit" class="button primary" disabled={busy}>
        Add the webhook
      </button>
    </form>
  )
}

function AddEmail(props: { onCreated: OnCreated }) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  return (
    <form
      class="panel"
      aria-labelledby="add-email"
      onSubmit={async (event) => {
        event.preventDefault()
        const form = event.currentTarget
        const data = new FormData(form)
        const name = String(data.get('name') ?? '')
        setBusy(true)
        setError(null)
        try {
          const channel = await api<NewChannel>('POST', '/v1/user/channels', {
            body: {
              type: 'email',
              ...(name && { name }),
              config: { address: String(data.get('address') ?? '') },
            },
          })
          form.reset()
          props.onCreated(
            channel,
            channel.verified
              ? `E-mail channel ${channel.name} added: it is your confirmed address, so it works at once.`
              : `E-mail channel ${channel.name} added. A confirmation link was sent to the address: it is used once the link is followed.`,
          )
        } catch (e) {
          setError(e)
        } finally {
          setBusy(false)
        }
      }}
    >
      <h3 id="add-email">An e-mail address</h3>
      <Field label="Name" name="name" maxLength={100} error={fieldError(error, 'name')} />
      <Field
        label="Address"
        name="address"
        type="email"
        required
        error={fieldError(error, 'config.address') ?? fieldError(error, 'config/address')}
      />
      <FormError error={error} />
      <button type="submit" class="button primary" disabled={busy}>
        Add the address
      </button>
    </form>
  )
}

/** A field's error, by its path in the API (`config.token`) or its JSON pointer. */
const configError = (error: unknown, name: string) =>
  fieldError(error, `config.${name}`) ?? fieldError(error, `config/${name}`)

/**
 * A push or chat service (docs/notifications.md#services): pick one, fill in what it needs.
 * Tokens are sent once and never shown again (the API keeps them).
 */
function AddService(props: { onCreated: OnCreated }) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [type, setType] = useState<string>(SERVICES[0]?.type ?? 'ntfy')
  const service = SERVICES.find((s) => s.type === type) ?? SERVICES[0]
  if (!service) return null
  return (
    <form
      class="panel"
      aria-labelledby="add-service"
      onSubmit={async (event) => {
        event.preventDefault()
        const form = event.currentTarget
        const data = new FormData(form)
        const name = String(data.get('name') ?? '')
        setBusy(true)
        setError(null)
        try {
          const channel = await api<NewChannel>('POST', '/v1/user/channels', {
            body: {
              type: service.type,
              ...(name && { name }),
              config: serviceConfig(service, data),
            },
          })
          form.reset()
          setType(service.type)
          props.onCreated(channel, `${service.label} channel ${channel.name} added.`)
        } catch (e) {
          setError(e)
        } finally {
          setBusy(false)
        }
      }}
    >
      <h3 id="add-service">A push or chat service</h3>
      <div class="field">
        <label for="service-type">Service</label>
        <select
          id="service-type"
          name="service"
          value={service.type}
          onChange={(event) => {
            setType(event.currentTarget.value)
            setError(null)
          }}
        >
          {SERVICES.map((s) => (
            <option key={s.type} value={s.type}>
              {s.label}
            </option>
          ))}
        </select>
      </div>
      <Field label="Name" name="name" maxLength={100} error={fieldError(error, 'name')} />
      {service.fields.map((field) => (
        <Field
          key={`${service.type}-${field.name}`}
          label={field.label}
          name={field.name}
          // note: preact's input types are one union per `type`; every one here takes these props
          type={(field.input === 'secret' ? 'password' : field.input) as 'text'}
          required={field.required}
          {...(field.input === 'secret' && { autocomplete: 'off' })}
          {...(field.input === 'number' && { min: 0, max: 10, step: 1 })}
          {...(field.placeholder && { placeholder: field.placeholder })}
          {...(field.hint && { hint: field.hint })}
          error={configError(error, field.name)}
        />
      ))}
      <FormError error={error} />
      <button type="submit" class="button primary" disabled={busy}>
        Add the {service.label} channel
      </button>
    </form>
  )
}

function AddThisBrowser(props: { onCreated: OnCreated; added: Channel | undefined }) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const supported = pushSupported()
  return (
    <section class="panel" aria-labelledby="add-browser">
      <h3 id="add-browser">This browser</h3>
      {supported && props.added?.enabled ? (
        <p>
          This browser already receives notifications: the channel{' '}
          <strong>{props.added.name}</strong>.
        </p>
      ) : supported ? (
        <>
          <p>The browser shows a notification, even while the app is closed.</p>
          <button
            type="button"
            class="button primary"
            disabled={busy}
            onClick={async () => {
              setBusy(true)
              setError(null)
              try {
                const channel = await addThisBrowser(browserName(navigator.userAgent))
                props.onCreated(channel, `This browser (${channel.name}) was added.`)
              } catch (e) {
                setError(
                  isMissingRoute(e)
                    ? new Error('This server does not offer browser notifications yet.')
                    : e,
                )
              } finally {
                setBusy(false)
              }
            }}
          >
            Add this browser
          </button>
        </>
      ) : (
        <p>This browser cannot receive push notifications.</p>
      )}
      <FormError error={error} />
    </section>
  )
}
