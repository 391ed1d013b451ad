import { useEffect, useState } from 'preact/hooks'
import { api, apiPath } from '../api.ts'
import { ConfirmButton } from '../components/confirm.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { Rich } from '../components/rich.tsx'
import { SecretOnce } from '../components/secret.tsx'
import { When } from '../components/when.tsx'
import { t } from '../i18n.ts'
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
        <h1>{t('app.notifications.title')}</h1>
        <p class="notice" role="status">
          {t('app.notifications.missing')}
        </p>
      </>
    )

  return (
    <>
      <h1>{t('app.notifications.title')}</h1>
      <p>{t('app.notifications.intro')}</p>
      {secret && (
        <SecretOnce
          title={t('app.notifications.secretTitle')}
          secret={secret.secret}
          onDone={() => setSecret(null)}
        >
          <p>
            <Rich
              text={t('app.notifications.secretText')}
              parts={{ name: () => <strong>{secret.name}</strong> }}
            />
          </p>
        </SecretOnce>
      )}
      <p class="notice" aria-live="polite">
        {notice}
      </p>

      <h2>{t('app.notifications.yours')}</h2>
      <FormError error={error} />
      {channels === null && !error && <p class="loading">{t('app.notifications.loading')}</p>}
      {channels && channels.length === 0 && <p>{t('app.notifications.none')}</p>}
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

      <h2>{t('app.notifications.add')}</h2>
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
  if (!channel.verified) return t('app.notifications.state.unconfirmed')
  if (!channel.enabled)
    return channel.disabledReason
      ? t('app.notifications.state.turnedOff')
      : t('app.notifications.state.off')
  if (channel.failingSince) return t('app.notifications.state.failing')
  return t('app.notifications.state.on')
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
        {props.isThisBrowser && (
          <span class="badge">{t('app.notifications.thisBrowserBadge')}</span>
        )}
      </div>
      <div class="muted channel-target">{channelTarget(channel)}</div>
      {!channel.verified && <p class="hint">{t('app.notifications.unconfirmedHint')}</p>}
      {channel.disabledReason && <p class="hint">{channel.disabledReason}</p>}
      {channel.failingSince && (
        <p class="hint">
          <Rich
            text={t('app.notifications.failingSince')}
            parts={{ at: () => <When iso={channel.failingSince} /> }}
          />
        </p>
      )}
      <div class="actions">
        <button
          type="button"
          class="button"
          aria-label={t('app.notifications.testLabel', { name })}
          disabled={!channel.verified}
          onClick={async () => {
            setError(null)
            try {
              const { eventId } = await api<{ eventId: string }>(
                'POST',
                apiPath`/v1/user/channels/${channel.id}/test`,
              )
              setTested(t('app.notifications.testSent'))
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
          {t('app.notifications.test')}
        </button>
        <button
          type="button"
          class="button"
          aria-expanded={showLog}
          aria-controls={`log-${channel.id}`}
          aria-label={t('app.notifications.logLabel', { name })}
          onClick={() => {
            if (!showLog) loadLog()
            setShowLog(!showLog)
          }}
        >
          {t('app.notifications.log')}
        </button>
        <button
          type="button"
          class="button"
          aria-label={t(
            channel.enabled ? 'app.notifications.turnOffLabel' : 'app.notifications.turnOnLabel',
            { name },
          )}
          onClick={async () => {
            setError(null)
            try {
              await api('PATCH', apiPath`/v1/user/channels/${channel.id}`, {
                body: { enabled: !channel.enabled },
              })
              props.onChanged(
                t(channel.enabled ? 'app.notifications.turnedOff' : 'app.notifications.turnedOn', {
                  name,
                }),
              )
            } catch (e) {
              setError(e)
            }
          }}
        >
          {channel.enabled ? t('app.notifications.turnOff') : t('app.notifications.turnOn')}
        </button>
        <ConfirmButton
          label={t('app.notifications.delete.label')}
          ariaLabel={t('app.notifications.delete.aria', { name })}
          title={t('app.notifications.delete.title', { name })}
          confirmLabel={t('app.notifications.delete.confirm')}
          onConfirm={async () => {
            await api('DELETE', apiPath`/v1/user/channels/${channel.id}`)
            props.onChanged(t('app.notifications.delete.done', { name }))
          }}
        >
          <p>{t('app.notifications.delete.text')}</p>
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
              aria-label={t('app.notifications.refreshLabel', { name })}
              onClick={loadLog}
            >
              {t('app.notifications.refresh')}
            </button>
          </div>
          {log && log.length === 0 && <p>{t('app.notifications.noDeliveries')}</p>}
          {log && log.length > 0 && (
            <div class="table-scroll">
              <table>
                <caption class="sr-only">{t('app.notifications.logCaption', { name })}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t('app.notifications.logHead.when')}</th>
                    <th scope="col">{t('app.notifications.logHead.event')}</th>
                    <th scope="col">{t('app.notifications.logHead.result')}</th>
                    <th scope="col">{t('app.notifications.logHead.duration')}</th>
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
                        {attempt.error === null ? t('app.notifications.delivered') : attempt.error}
                        {attempt.statusCode !== null && ` (HTTP ${attempt.statusCode})`}
                      </td>
                      <td>{t('app.notifications.durationMs', { ms: attempt.durationMs })}</td>
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
          props.onCreated(channel, t('app.notifications.webhook.added', { name: channel.name }))
        } catch (e) {
          setError(e)
        } finally {
          setBusy(false)
        }
      }}
    >
      <h3 id="add-webhook">{t('app.notifications.webhook.title')}</h3>
      <Field
        label={t('app.notifications.name')}
        name="name"
        maxLength={100}
        error={fieldError(error, 'name')}
      />
      <Field
        label={t('app.notifications.webhook.url')}
        name="url"
        type="url"
        required
        placeholder="https://"
        error={fieldError(error, 'config.url') ?? fieldError(error, 'config/url')}
      />
      <div class="field">
        <label for="webhook-format">{t('app.notifications.webhook.formatLabel')}</label>
        <select id="webhook-format" name="format">
          {(Object.keys(WEBHOOK_FORMAT_TEXT) as WebhookFormat[]).map((format) => (
            <option key={format} value={format}>
              {WEBHOOK_FORMAT_TEXT[format]()}
            </option>
          ))}
        </select>
      </div>
      <FormError error={error} />
      <button type="submit" class="button primary" disabled={busy}>
        {t('app.notifications.webhook.submit')}
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
            t(
              channel.verified
                ? 'app.notifications.email.addedVerified'
                : 'app.notifications.email.added',
              { name: channel.name },
            ),
          )
        } catch (e) {
          setError(e)
        } finally {
          setBusy(false)
        }
      }}
    >
      <h3 id="add-email">{t('app.notifications.email.title')}</h3>
      <Field
        label={t('app.notifications.name')}
        name="name"
        maxLength={100}
        error={fieldError(error, 'name')}
      />
      <Field
        label={t('app.notifications.email.address')}
        name="address"
        type="email"
        required
        error={fieldError(error, 'config.address') ?? fieldError(error, 'config/address')}
      />
      <FormError error={error} />
      <button type="submit" class="button primary" disabled={busy}>
        {t('app.notifications.email.submit')}
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
          props.onCreated(
            channel,
            t('app.notifications.service.added', { service: service.label, name: channel.name }),
          )
        } catch (e) {
          setError(e)
        } finally {
          setBusy(false)
        }
      }}
    >
      <h3 id="add-service">{t('app.notifications.service.title')}</h3>
      <div class="field">
        <label for="service-type">{t('app.notifications.service.label')}</label>
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
      <Field
        label={t('app.notifications.name')}
        name="name"
        maxLength={100}
        error={fieldError(error, 'name')}
      />
      {service.fields.map((field) => (
        <Field
          key={`${service.type}-${field.name}`}
          label={field.label()}
          name={field.name}
          // note: preact's input types are one union per `type`; every one here takes these props
          type={(field.input === 'secret' ? 'password' : field.input) as 'text'}
          required={field.required}
          {...(field.input === 'secret' && { autocomplete: 'off' })}
          {...(field.input === 'number' && { min: 0, max: 10, step: 1 })}
          {...(field.placeholder && { placeholder: field.placeholder })}
          {...(field.hint && { hint: field.hint() })}
          error={configError(error, field.name)}
        />
      ))}
      <FormError error={error} />
      <button type="submit" class="button primary" disabled={busy}>
        {t('app.notifications.service.submit', { service: service.label })}
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
      <h3 id="add-browser">{t('app.notifications.browser.title')}</h3>
      {supported && props.added?.enabled ? (
        <p>
          <Rich
            text={t('app.notifications.browser.already')}
            parts={{ name: () => <strong>{props.added?.name}</strong> }}
          />
        </p>
      ) : supported ? (
        <>
          <p>{t('app.notifications.browser.text')}</p>
          <button
            type="button"
            class="button primary"
            disabled={busy}
            onClick={async () => {
              setBusy(true)
              setError(null)
              try {
                const channel = await addThisBrowser(browserName(navigator.userAgent))
                props.onCreated(
                  channel,
                  t('app.notifications.browser.added', { name: channel.name }),
                )
              } catch (e) {
                setError(isMissingRoute(e) ? new Error(t('app.notifications.browser.missing')) : e)
              } finally {
                setBusy(false)
              }
            }}
          >
            {t('app.notifications.browser.submit')}
          </button>
        </>
      ) : (
        <p>{t('app.notifications.browser.unsupported')}</p>
      )}
      <FormError error={error} />
    </section>
  )
}
