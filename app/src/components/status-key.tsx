import { t } from '../i18n.ts'
import { Link } from '../router.tsx'
import type { Status } from '../types.ts'
import { CopyField } from './copy.tsx'
import { Rich } from './rich.tsx'

// A status's key and the lines that use it (docs/app.md#from-scripts-and-devices): the key is
// how scripts, the `statusd` command and devices name the status, so the screen that shows
// the status shows the ready-to-copy lines, on this service's own address.

/** A word for a POSIX shell: as it is when it is plain, else in single quotes. */
export const shellWord = (text: string): string =>
  /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`

/** The lines for a status's key: the JSON write, the command, and a device's plain text. */
export function keyLines(origin: string, key: string, value: string) {
  const url = `${origin}/v1/status-keys/${encodeURIComponent(key)}`
  const body = JSON.stringify({ value })
  return {
    curl: `curl -fsS -X POST ${url} -H "service-api-key: $KEY" -H 'content-type: application/json' -d ${shellWord(body)}`,
    cli: `npx statusd set ${shellWord(key)} ${shellWord(value)}`,
    device: `echo ${shellWord(value)} | curl -fsS -T- ${url}/value -H "service-api-key: $KEY"`,
  }
}

export function StatusKey(props: { status: Status }) {
  const { status } = props
  const key = status.statusKey
  if (!key) return null
  // an example value: the palette's first, else the current one
  const value = status.palette[0]?.value ?? status.value ?? 'FREE'
  const lines = keyLines(location.origin, key, value)
  return (
    <section class="status-key" aria-labelledby="status-key-heading">
      <h2 id="status-key-heading">{t('app.statusKey.title')}</h2>
      <p class="hint">
        <Rich
          text={t('app.statusKey.hint')}
          parts={{
            key: () => <code class="user-text">{key}</code>,
            var: () => <code>$KEY</code>,
            keys: (text) => <Link href="/keys">{text}</Link>,
            login: () => <code>npx statusd login --url {location.origin}</code>,
          }}
        />
      </p>
      <CopyField
        label={t('app.statusKey.key')}
        text={key}
        buttonLabel={t('app.statusKey.copyKey')}
      />
      <CopyField label="curl" text={lines.curl} buttonLabel={t('app.statusKey.copyCurl')} />
      <CopyField
        label={t('app.statusKey.command')}
        text={lines.cli}
        buttonLabel={t('app.statusKey.copyCommand')}
      />
      <CopyField
        label={t('app.statusKey.device')}
        text={lines.device}
        buttonLabel={t('app.statusKey.copyDevice')}
      />
    </section>
  )
}
