import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'
import {
  addressRefusal,
  OUTBOUND_MAX_RESPONSE_BYTES,
  OUTBOUND_TIMEOUT_MS,
  OutboundClient,
  OutboundError,
  parseNetworks,
} from '../../src/lib/outbound.ts'
import { makeApp } from '../helpers/app.ts'
import { defer } from '../helpers/cleanup.ts'
import { networkNamespaceUnavailable, runWithoutNetwork } from '../helpers/netns.ts'
import { ROOT } from '../helpers/processes.ts'
import { startReceiver } from '../helpers/webhook-receiver.ts'

// docs/notifications.md#outbound-safety: every address a name resolves to is checked, the
// connection goes to the address checked, and private networks are reached only when
// WEBHOOK_ALLOW_NETWORKS allows them.

const REFUSED: [string, RegExp][] = [
  ['127.0.0.1', /loopback/],
  ['127.255.0.9', /loopback/],
  ['10.1.2.3', /private/],
  ['172.16.0.1', /private/],
  ['192.168.1.1', /private/],
  ['100.64.0.1', /carrierGradeNat/],
  ['169.254.169.254', /linkLocal/],
  ['0.0.0.0', /unspecified/],
  ['224.0.0.1', /multicast/],
  ['255.255.255.255', /broadcast/],
  ['240.0.0.1', /reserved/],
  ['192.0.2.1', /reserved/],
  ['::1', /loopback/],
  ['::', /unspecified/],
  ['fe80::1', /linkLocal/],
  ['fc00::1', /uniqueLocal/],
  ['fd12:3456::1', /uniqueLocal/],
  ['ff02::1', /multicast/],
  ['::ffff:127.0.0.1', /loopback/],
  ['::ffff:169.254.169.254', /linkLocal/],
  ['::ffff:10.0.0.1', /private/],
  // IPv6 forms that carry an IPv4 address are judged as the IPv4 address they reach
  ['::ffff:0:10.0.0.1', /private .*IPv4 10\.0\.0\.1/],
  ['::127.0.0.1', /loopback .*IPv4 127\.0\.0\.1/],
  ['::10.0.0.1', /private .*IPv4 10\.0\.0\.1/],
  // the same in hex, as a URL's host and getaddrinfo write them
  ['::7f00:1', /loopback .*IPv4 127\.0\.0\.1/],
  ['::a00:1', /private .*IPv4 10\.0\.0\.1/],
  ['::a9fe:a9fe', /linkLocal .*IPv4 169\.254\.169\.254/],
  ['::169.254.169.254', /linkLocal/],
  ['::100.64.0.1', /carrierGradeNat/],
  ['64:ff9b::a00:1', /private .*IPv4 10\.0\.0\.1/],
  ['64:ff9b::127.0.0.1', /loopback/],
  ['64:ff9b::169.254.169.254', /linkLocal/],
  // the local-use NAT64 prefix embeds the address where its operator chose: refused as a whole
  ['64:ff9b:1::a00:1', /rfc6052/],
  ['2002:7f00:1::', /6to4/],
  ['2001::1', /teredo/],
  ['not-an-ip', /not an IP address/],
]

const ALLOWED = [
  '93.184.216.34',
  '8.8.8.8',
  '2606:4700:4700::1111',
  '::ffff:8.8.8.8',
  // a public IPv4 address through NAT64 (what DNS64 answers on an IPv6-only host)
  '64:ff9b::808:808',
]

describe('address rules (docs/notifications.md#outbound-safety)', () => {
  for (const [ip, why] of REFUSED)
    it(`${ip} is refused`, () => assert.match(addressRefusal(ip) ?? 'allowed', why))
  for (const ip of ALLOWED)
    it(`${ip} (public) is allowed`, () => assert.equal(addressRefusal(ip), null))

  it('WEBHOOK_ALLOW_NETWORKS lets its networks through, and only them', () => {
    const allow = parseNetworks('127.0.0.0/8, fd00::/8, 10.9.9.9')
    assert.equal(addressRefusal('127.0.0.1', allow), null)
    assert.equal(addressRefusal('::ffff:127.0.0.1', allow), null, 'the mapped form too')
    assert.equal(addressRefusal('::127.0.0.1', allow), null, 'the compatible form too')
    assert.equal(addressRefusal('fd12::1', allow), null)
    assert.equal(addressRefusal('10.9.9.9', allow), null, 'a bare address is its own /32')
    assert.match(addressRefusal('10.9.9.10', allow) ?? '', /private/)
    assert.match(addressRefusal('169.254.169.254', allow) ?? '', /linkLocal/)
    assert.match(addressRefusal('::1', allow) ?? '', /loopback/)
    assert.throws(() => parseNetworks('localhost'), /not a CIDR/)
  })

  it('the production bounds: 5 s for the whole exchange, 64 KiB of answer', () => {
    assert.equal(OUTBOUND_TIMEOUT_MS, 5_000)
    assert.equal(OUTBOUND_MAX_RESPONSE_BYTES, 64 * 1024)
  })
})

const refusal = async (client: OutboundClient, url: string) => {
  const err = await client.post(url, { headers: {}, body: '{}' }).then(
    () => assert.fail(`${url} was called`),
    (e: unknown) => e,
  )
  assert.ok(err instanceof OutboundError, String(err))
  return err
}

describe('the guarded client (docs/notifications.md#outbound-safety)', () => {
  it('without the allow-list: loopback, the metadata address, private and a name resolving to loopback are refused before any connection', async (t) => {
    const receiver = await startReceiver(t)
    const v6 = http.createServer((_req, res) => res.end())
    const v6Listening = await new Promise<boolean>((resolve) => {
      v6.once('error', () => resolve(false))
      v6.listen(0, '::1', () => resolve(true))
    })
    defer(
      t,
      () => new Promise<void>((resolve) => (v6Listening ? v6.close(() => resolve()) : resolve())),
    )
    const client = new OutboundClient({ timeoutMs: 2_000 })
    defer(t, () => client.close())
    const port = new URL(receiver.origin).port
    const urls = [
      `${receiver.origin}/hook`,
      `http://localhost:${port}/hook`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/hook',
      'http://[::ffff:127.0.0.1]:1/hook',
      `http://[::1]:${v6Listening ? (v6.address() as AddressInfo).port : 1}/hook`,
    ]
    for (const url of urls) {
      const err = await refusal(client, url)
      assert.equal(err.refused, true, `${url}: ${err.message}`)
      assert.match(err.message, /^refused: /)
    }
    assert.match(
      (await refusal(client, `http://localhost:${port}/`)).message,
      /localhost resolves to/,
    )
    assert.equal(receiver.requests.length, 0, 'nothing reached the receiver')
    assert.equal((await refusal(client, 'ftp://example.com/')).refused, true)
  })

  // note: a guard that let these through would connect: only in a namespace with nothing but
  // `lo` does that send nothing off the machine
  const isolation = { skip: networkNamespaceUnavailable() ?? false }
  it(
    'an IPv6 address carrying an IPv4 one is judged as that IPv4 address: ::127.0.0.1, ::10.0.0.1 and 64:ff9b::10.0.0.1 are refused before any connection',
    isolation,
    async (t) => {
      const outbound = pathToFileURL(path.join(ROOT, 'src', 'lib', 'outbound.ts')).href
      const urls = [
        'http://[::127.0.0.1]:8080/hook',
        'http://[::10.0.0.1]/hook',
        'http://[::a9fe:a9fe]/latest/meta-data/',
        'http://[64:ff9b::10.0.0.1]/hook',
        'http://[::ffff:0:10.0.0.1]/hook',
      ]
      const answer = (await runWithoutNetwork(
        t,
        `const { OutboundClient } = await import(${JSON.stringify(outbound)})
        const client = new OutboundClient({ timeoutMs: 2000 })
        const results = []
        for (const url of ${JSON.stringify(urls)}) {
          try {
            await client.post(url, { headers: {}, body: '{}' })
            results.push({ url, called: true })
          } catch (err) {
            results.push({ url, message: err.message, refused: err.refused })
          }
        }
        await client.close()
        return results`,
      )) as {
        interfaces: string[]
        result: { url: string; called?: boolean; message?: string; refused?: boolean }[]
      }
      assert.deepEqual(answer.interfaces, ['lo'], 'the guard ran where only loopback exists')
      for (const outcome of answer.result) {
        assert.equal(outcome.called, undefined, `${outcome.url} was called`)
        assert.equal(outcome.refused, true, `${outcome.url}: ${outcome.message}`)
        assert.match(outcome.message ?? '', /^refused: .* written as IPv6\)$/, outcome.url)
      }
    },
  )

  it('every address of a name is checked: one inside refuses the name', async (t) => {
    const client = new OutboundClient({ resolve: async () => ['93.184.216.34', '127.0.0.1'] })
    defer(t, () => client.close())
    const err = await refusal(client, 'http://rebind.example/hook')
    assert.equal(err.refused, true)
    assert.match(err.message, /rebind\.example resolves to 127\.0\.0\.1 is a loopback address/)
  })

  it('the connection goes to the address checked, keeping the name as Host (no second lookup)', async (t) => {
    const receiver = await startReceiver(t)
    const lookups: string[] = []
    const client = new OutboundClient({
      allowNetworks: parseNetworks('127.0.0.0/8'),
      // a name the system cannot resolve: only the checked answer can have been used
      resolve: async (name) => {
        lookups.push(name)
        return ['127.0.0.1']
      },
    })
    defer(t, () => client.close())
    const port = new URL(receiver.origin).port
    const answer = await client.post(`http://hooks.statusd.invalid:${port}/in`, {
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    })
    assert.equal(answer.statusCode, 200)
    assert.deepEqual(lookups, ['hooks.statusd.invalid'])
    assert.equal(receiver.requests[0]?.headers.host, `hooks.statusd.invalid:${port}`)
    assert.equal(receiver.requests[0]?.body, '{"a":1}')
  })

  it('connections are kept alive: 20 posts one after another to one receiver reuse a connection or two, each name checked once per connection', async (t) => {
    const receiver = await startReceiver(t)
    let connections = 0
    receiver.server.on('connection', () => connections++)
    const lookups: string[] = []
    const client = new OutboundClient({
      allowNetworks: parseNetworks('127.0.0.0/8'),
      resolve: async (name) => {
        lookups.push(name)
        return ['127.0.0.1']
      },
    })
    defer(t, () => client.close())
    const port = new URL(receiver.origin).port
    for (let i = 0; i < 20; i++) {
      const answer = await client.post(`http://hooks.statusd.invalid:${port}/in/${i}`, {
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
      assert.equal(answer.statusCode, 200)
    }
    assert.equal(receiver.requests.length, 20)
    // note: undici's pool may open a second connection while the first answer is being
    // completed; from then on both are reused
    assert.ok(connections <= 2, `${connections} connections for 20 posts`)
    assert.equal(lookups.length, connections, 'the name is checked when a connection opens')
  })

  it('a webhook to a refused address: its delivery fails at once, logged, never retried', async (t) => {
    const receiver = await startReceiver(t)
    // a name that was public when its channel was made and points at loopback when sent
    // (DNS rebinding): each send judges the address again. No WEBHOOK_ALLOW_NETWORKS.
    let answer = ['93.184.216.34']
    const app = await makeApp(t, {
      deps: { notifications: { autoStart: false, outbound: { resolve: async () => answer } } },
    })
    const owner = await app.user()
    const made = await app.request(owner, 'POST', '/v1/user/channels', {
      type: 'webhook',
      config: {
        url: `http://rebind.example:${new URL(receiver.origin).port}/hook`,
        format: 'standard',
      },
    })
    assert.equal(made.statusCode, 201, made.body)
    const channel = made.json()
    const tested = await app.request(owner, 'POST', `/v1/user/channels/${channel.id}/test`)
    assert.equal(tested.statusCode, 202, tested.body)
    answer = ['127.0.0.1']
    await app.app.deliveryWorker.runOnce()
    const [attempt] = (
      await app.request(owner, 'GET', `/v1/user/channels/${channel.id}/deliveries`)
    ).json()
    assert.match(
      attempt.error,
      /^refused: rebind\.example resolves to 127\.0\.0\.1 is a loopback address/,
    )
    assert.equal(attempt.statusCode, null)
    const delivery = await app.database.db
      .selectFrom('deliveries')
      .select(['state', 'attempts'])
      .executeTakeFirstOrThrow()
    assert.deepEqual(delivery, { state: 'failed', attempts: 1 })
    assert.equal(receiver.requests.length, 0)
  })
})
