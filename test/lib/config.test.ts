import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { DEFAULT_PLANS } from '../../src/modules/plans/plans.ts'

// docs/operations.md#configuration: DATABASE_URL, PORT (8080), HOST (127.0.0.1), PUBLIC_URL,
// LOG_LEVEL, PLANS_FILE — read into one validated Config; a mistake is a ConfigError with a
// one-line message.

/** loadConfig(env) fails with a ConfigError whose message matches every pattern. */
function refuses(env: NodeJS.ProcessEnv, ...patterns: RegExp[]): void {
  assert.throws(
    () => loadConfig(env),
    (err: Error) => {
      assert.ok(err instanceof ConfigError, `a ConfigError, got ${err}`)
      assert.equal(err.name, 'ConfigError')
      for (const p of patterns) assert.match(err.message, p)
      assert.ok(!err.message.includes('\n'), 'one line')
      return true
    },
  )
}

describe('loadConfig', () => {
  it('defaults: sqlite:./data/statusd.db, 127.0.0.1:8080, info, no PUBLIC_URL, built-in plans', () =>
    assert.deepEqual(loadConfig({}), {
      databaseUrl: 'sqlite:./data/statusd.db',
      port: 8080,
      host: '127.0.0.1',
      publicUrl: null,
      logLevel: 'info',
      authCacheSeconds: 5,
      databasePoolSize: 10,
      databaseListenUrl: null,
      plans: DEFAULT_PLANS,
      sqliteBusyTimeoutMs: 1000,
      streamsPerClient: 64,
      streamsMax: null,
      anonRequestsPerMinute: 1200,
      trustProxy: false,
      signup: 'invite',
      smtpUrl: null,
      mailFrom: 'statusd <statusd@localhost>',
      webhookAllowNetworks: [],
      staleCheckIntervalMs: 10_000,
      liveRelayIntervalMs: 1_000,
      backupDir: null,
      backupEveryMs: null,
      backupKeep: null,
      mqtt: null,
    }))

  it('WEBHOOK_ALLOW_NETWORKS: none by default; CIDR ranges and addresses (docs/notifications.md#outbound-safety)', () => {
    assert.deepEqual(loadConfig({ WEBHOOK_ALLOW_NETWORKS: '' }).webhookAllowNetworks, [])
    assert.deepEqual(
      loadConfig({ WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8, 10.1.2.3,fd00::/8' }).webhookAllowNetworks,
      ['127.0.0.0/8', '10.1.2.3', 'fd00::/8'],
    )
    for (const bad of ['localhost', '10.0.0.0/33', '300.1.1.1', '10.0.0.0/8,nope'])
      refuses({ WEBHOOK_ALLOW_NETWORKS: bad }, /WEBHOOK_ALLOW_NETWORKS/)
  })

  it('SIGNUP: invite (default) or open (docs/accounts.md#signing-up)', () => {
    assert.equal(loadConfig({ SIGNUP: 'open' }).signup, 'open')
    assert.equal(loadConfig({ SIGNUP: 'invite' }).signup, 'invite')
    for (const bad of ['closed', 'OPEN', 'yes']) refuses({ SIGNUP: bad }, /SIGNUP/)
  })

  it('SMTP_URL: smtp:// or smtps://, never echoed (docs/accounts.md#e-mail)', () => {
    assert.equal(loadConfig({ SMTP_URL: 'smtp://127.0.0.1:2525' }).smtpUrl, 'smtp://127.0.0.1:2525')
    refuses({ SMTP_URL: 'http://user:hunter2@mail' }, /SMTP_URL/)
    assert.throws(
      () => loadConfig({ SMTP_URL: 'http://user:hunter2@mail' }),
      (err: Error) => !err.message.includes('hunter2'),
    )
  })

  it('MQTT_URL, MQTT_API_KEY, MQTT_PREFIX, MQTT_PROTOCOL, MQTT_DISCOVERY: the bridge, never echoing its secrets (docs/integrations.md#broker-settings)', () => {
    const key = 'sdk_secretsecret'
    assert.deepEqual(loadConfig({ MQTT_URL: 'mqtt://127.0.0.1:1883', MQTT_API_KEY: key }).mqtt, {
      url: 'mqtt://127.0.0.1:1883',
      apiKey: key,
      prefix: 'statusd',
      protocolVersion: 4,
      discovery: 'homeassistant',
    })
    const set = loadConfig({
      MQTT_URL: 'mqtts://bridge:hunter2@broker.example.com:8883',
      MQTT_API_KEY: key,
      MQTT_PREFIX: 'office',
      MQTT_PROTOCOL: '5',
      MQTT_DISCOVERY: '',
    }).mqtt
    assert.equal(set?.prefix, 'office')
    assert.equal(set?.protocolVersion, 5)
    for (const bad of ['3', '4', 'v5'])
      refuses(
        { MQTT_URL: 'mqtt://127.0.0.1', MQTT_API_KEY: key, MQTT_PROTOCOL: bad },
        /MQTT_PROTOCOL/,
      )
    assert.equal(set?.discovery, null, 'empty: no discovery')
    assert.equal(loadConfig({ MQTT_API_KEY: key }).mqtt, null, 'no MQTT_URL: no bridge')
    refuses({ MQTT_URL: 'mqtt://127.0.0.1' }, /MQTT_URL needs MQTT_API_KEY/)
    refuses({ MQTT_URL: 'http://bridge:hunter2@broker', MQTT_API_KEY: key }, /MQTT_URL/)
    assert.throws(
      () => loadConfig({ MQTT_URL: 'http://bridge:hunter2@broker', MQTT_API_KEY: key }),
      (err: Error) => !err.message.includes('hunter2'),
    )
    for (const prefix of ['a/b', 'home/#', '+'])
      refuses(
        { MQTT_URL: 'mqtt://127.0.0.1', MQTT_API_KEY: key, MQTT_PREFIX: prefix },
        /MQTT_PREFIX/,
      )
  })

  it('STREAMS_PER_CLIENT: a whole number from 1 (docs/operations.md#limits-per-client)', () => {
    assert.equal(loadConfig({ STREAMS_PER_CLIENT: '1' }).streamsPerClient, 1)
    assert.equal(loadConfig({ STREAMS_PER_CLIENT: '5000' }).streamsPerClient, 5000)
    for (const bad of ['0', '-1', '1.5', '0x40', 'many'])
      refuses({ STREAMS_PER_CLIENT: bad }, /STREAMS_PER_CLIENT/)
  })

  it('STREAMS_MAX: unset (from the descriptor limit) or a whole number from 1 (docs/operations.md#server-wide-stream-capacity)', () => {
    assert.equal(loadConfig({}).streamsMax, null)
    assert.equal(loadConfig({ STREAMS_MAX: '' }).streamsMax, null)
    assert.equal(loadConfig({ STREAMS_MAX: '1' }).streamsMax, 1)
    assert.equal(loadConfig({ STREAMS_MAX: '50000' }).streamsMax, 50000)
    for (const bad of ['0', '-1', '1.5', '1e4', 'all']) refuses({ STREAMS_MAX: bad }, /STREAMS_MAX/)
  })

  it('ANON_REQUESTS_PER_MINUTE: a whole number from 1 (docs/operations.md#limits-per-client)', () => {
    assert.equal(loadConfig({ ANON_REQUESTS_PER_MINUTE: '1' }).anonRequestsPerMinute, 1)
    assert.equal(loadConfig({ ANON_REQUESTS_PER_MINUTE: '60000' }).anonRequestsPerMinute, 60000)
    for (const bad of ['0', '-5', '1e3', 'lots'])
      refuses({ ANON_REQUESTS_PER_MINUTE: bad }, /ANON_REQUESTS_PER_MINUTE/)
  })

  it('TRUST_PROXY: off by default; a hop count, or proxy addresses and CIDR ranges', () => {
    for (const off of ['', 'false', '0'])
      assert.equal(loadConfig({ TRUST_PROXY: off }).trustProxy, false)
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1)
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,fd00::/8' }).trustProxy, [
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
      'fd00::/8',
    ])
    assert.deepEqual(loadConfig({ TRUST_PROXY: 'loopback' }).trustProxy, ['loopback'])
    // true would let any client name itself, and escape the per-client limits
    for (const bad of ['true', '10.0.0.0/33', 'proxy.example.com', '1.2.3', '10.0.0.1/8/8', ','])
      refuses({ TRUST_PROXY: bad }, /TRUST_PROXY/)
  })

  it('AUTH_CACHE_SECONDS: whole seconds 0..3600 (0 disables the key cache)', () => {
    assert.equal(loadConfig({ AUTH_CACHE_SECONDS: '0' }).authCacheSeconds, 0)
    assert.equal(loadConfig({ AUTH_CACHE_SECONDS: '30' }).authCacheSeconds, 30)
    for (const bad of ['-1', '1.5', 'abc', '3601'])
      refuses({ AUTH_CACHE_SECONDS: bad }, /AUTH_CACHE_SECONDS/)
  })

  it('reads every variable', () => {
    const config = loadConfig({
      DATABASE_URL: 'sqlite::memory:',
      PORT: '3000',
      HOST: '0.0.0.0',
      PUBLIC_URL: 'https://status.example.com',
      LOG_LEVEL: 'debug',
    })
    assert.equal(config.databaseUrl, 'sqlite::memory:')
    assert.equal(config.port, 3000)
    assert.equal(config.host, '0.0.0.0')
    assert.equal(config.publicUrl, 'https://status.example.com')
    assert.equal(config.logLevel, 'debug')
  })

  it('does not read process.env when given an env', () => {
    const saved = process.env.PORT
    process.env.PORT = 'not a port'
    try {
      assert.equal(loadConfig({}).port, 8080)
    } finally {
      if (saved === undefined) delete process.env.PORT
      else process.env.PORT = saved
    }
  })

  it('PORT 0 (any free port) and 65535 are valid', () => {
    assert.equal(loadConfig({ PORT: '0' }).port, 0)
    assert.equal(loadConfig({ PORT: '65535' }).port, 65535)
  })

  for (const port of ['abc', '-1', '65536', '80.5', '8080abc', 'eighty'])
    it(`PORT ${JSON.stringify(port)} is a ConfigError naming PORT`, () =>
      refuses({ PORT: port }, /PORT/, new RegExp(port.replace('.', '\\.'))))

  // decimal digits only: Number() alone reads these as 16, 1000, 80, 0 (a random port) and 80
  for (const port of ['0x10', '1e3', ' 80', '  ', '+80', '0b1', '80 '])
    it(`PORT ${JSON.stringify(port)} is a ConfigError, not the number Number() reads`, () =>
      refuses({ PORT: port }, /PORT/))

  for (const [name, text] of [
    ['DATABASE_POOL_SIZE', '0x10'],
    ['DATABASE_POOL_SIZE', ' 5'],
    ['SQLITE_BUSY_TIMEOUT_MS', '1e3'],
    ['SQLITE_BUSY_TIMEOUT_MS', '5000.0'],
    ['AUTH_CACHE_SECONDS', '0x5'],
  ] as const)
    it(`${name} ${JSON.stringify(text)} is a ConfigError naming it`, () =>
      refuses({ [name]: text }, new RegExp(name)))

  it('an empty PORT means the default, like the other variables (not a random port)', () =>
    assert.equal(loadConfig({ PORT: '' }).port, 8080))

  for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    it(`LOG_LEVEL ${level} is valid`, () =>
      assert.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level))

  for (const level of ['verbose', 'warning', 'INFO', '5'])
    it(`LOG_LEVEL ${JSON.stringify(level)} is a ConfigError listing the levels`, () =>
      refuses({ LOG_LEVEL: level }, /LOG_LEVEL/, /debug/, new RegExp(level)))

  it('an empty LOG_LEVEL means the default', () =>
    assert.equal(loadConfig({ LOG_LEVEL: '' }).logLevel, 'info'))

  it('PUBLIC_URL loses its trailing slash', () =>
    assert.equal(
      loadConfig({ PUBLIC_URL: 'https://status.example.com/' }).publicUrl,
      'https://status.example.com',
    ))

  it('PUBLIC_URL may have a path prefix', () =>
    assert.equal(
      loadConfig({ PUBLIC_URL: 'http://example.com:8080/statusd/' }).publicUrl,
      'http://example.com:8080/statusd',
    ))

  it('an empty PUBLIC_URL is none', () =>
    assert.equal(loadConfig({ PUBLIC_URL: '' }).publicUrl, null))

  for (const url of [
    'not a url',
    'example.com',
    '/relative/path',
    'ftp://example.com',
    'javascript:alert(1)',
    'mailto:ops@example.com',
    'https://example.com/?page=1',
    'https://example.com/#top',
  ])
    it(`PUBLIC_URL ${JSON.stringify(url)} is a ConfigError naming PUBLIC_URL`, () =>
      refuses({ PUBLIC_URL: url }, /PUBLIC_URL/))

  it('an empty DATABASE_URL or HOST means the default', () => {
    const config = loadConfig({ DATABASE_URL: '', HOST: '' })
    assert.equal(config.databaseUrl, 'sqlite:./data/statusd.db')
    assert.equal(config.host, '127.0.0.1')
  })

  describe('PLANS_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'statusd-config-'))
    after(() => rmSync(dir, { recursive: true, force: true }))

    it('replaces the built-in plans', () => {
      const plans = {
        solo: {
          descriptionLinks: true,
          accessSettings: false,
          maxStatuses: 3,
          requestsPerMinute: null,
          historyDays: 1,
        },
      }
      const path = join(dir, 'plans.json')
      writeFileSync(path, JSON.stringify(plans))
      assert.deepEqual(loadConfig({ PLANS_FILE: path }).plans, plans)
    })

    it('a bad plans file is a ConfigError naming the file and the problem', () => {
      const path = join(dir, 'bad.json')
      writeFileSync(path, JSON.stringify({ free: { descriptionLinks: 'no' } }))
      refuses({ PLANS_FILE: path }, /PLANS_FILE/, new RegExp(path), /\/free/)
    })

    it('a missing plans file is a ConfigError', () =>
      refuses({ PLANS_FILE: join(dir, 'missing.json') }, /PLANS_FILE/, /missing\.json/))
  })
})

describe('DATABASE_URL shape', () => {
  it('a malformed postgres:// URL is a one-line ConfigError that does not echo it', () =>
    refuses({ DATABASE_URL: 'postgres://u:secret@[bad/x' }, /DATABASE_URL/, /^(?!.*secret)/))
})

// docs/postgres.md#behind-pgbouncer
describe('DATABASE_LISTEN_URL', () => {
  const pooled = 'postgres://statusd@pgbouncer:6432/statusd'
  const direct = 'postgres://statusd:secret@db:5432/statusd'

  it('DATABASE_LISTEN_URL beside a PostgreSQL DATABASE_URL is read as given', () =>
    assert.equal(
      loadConfig({ DATABASE_URL: pooled, DATABASE_LISTEN_URL: direct }).databaseListenUrl,
      direct,
    ))

  it('DATABASE_LISTEN_URL beside a SQLite DATABASE_URL is a ConfigError', () =>
    refuses({ DATABASE_LISTEN_URL: direct }, /DATABASE_LISTEN_URL is for PostgreSQL/))

  it('a DATABASE_LISTEN_URL that is not a postgres:// URL is a ConfigError that does not echo it', () => {
    refuses(
      { DATABASE_URL: pooled, DATABASE_LISTEN_URL: 'mysql://u:secret@db/x' },
      /DATABASE_LISTEN_URL must be a valid postgres:\/\/ URL/,
      /^(?!.*secret)/,
    )
    refuses(
      { DATABASE_URL: pooled, DATABASE_LISTEN_URL: 'postgres://u:secret@[bad/x' },
      /DATABASE_LISTEN_URL/,
      /^(?!.*secret)/,
    )
  })
})
