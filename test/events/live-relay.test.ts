import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { OutboxTail, OutboxTailPage } from '../../src/db/engine.ts'
import { LiveRelay } from '../../src/modules/events/live-relay.ts'
import type { StatusFeeds } from '../../src/modules/events/status-feeds.ts'

// docs/postgres.md#the-outbox-changes-no-notification-can-lose: the relay's position holds
// only on the server it was taken on. After a failover or a restart it takes a new one, and
// only then do the streams read their statuses again, so that nothing committed in between is
// skipped. The tail here is a script (the PostgreSQL one has its tests in
// test/events/events-postgres.test.ts and test/multi/live-relay.test.ts); what is checked is the
// order of the relay's calls.

const page = (next: string, more: Partial<OutboxTailPage> = {}): OutboxTailPage => ({
  next,
  complete: true,
  restarted: false,
  changed: [],
  ...more,
})

function scripted(
  reads: Array<(from: string) => Promise<OutboxTailPage>> = [],
  watched: string[] = [],
) {
  const calls: string[] = []
  const infos: string[] = []
  let positions = 0
  const tail: OutboxTail = {
    async start() {
      positions += 1
      calls.push(`start p${positions}`)
      return `p${positions}`
    },
    read(from, _types, _limit, statusIds) {
      calls.push(`read ${from}${statusIds?.length ? ` [${statusIds.join(' ')}]` : ''}`)
      return reads.shift()?.(from) ?? Promise.resolve(page(from))
    },
  }
  const feeds = {
    refreshAll: () => calls.push('refreshAll'),
    relayed: (statusId: string) => calls.push(`relayed ${statusId}`),
    refresh: (statusId: string) => calls.push(`refresh ${statusId}`),
    statusIds: () => [...watched],
  } as unknown as StatusFeeds
  const relay = new LiveRelay({
    tail,
    feeds,
    log: { info: (msg: string) => infos.push(msg), warn: () => {} } as never,
    intervalMs: 3_600_000,
  })
  return { relay, calls, infos }
}

describe('the outbox relay (LiveRelay)', () => {
  it('after the LISTEN connection came back (restart), takes a new position first, then every stream reads its status again', async () => {
    const { relay, calls } = scripted()
    await relay.runOnce()
    await relay.runOnce()
    relay.restart()
    await relay.runOnce()
    assert.deepEqual(calls, [
      'start p1',
      'refreshAll',
      'read p1',
      'start p2',
      'refreshAll',
      'read p2',
    ])
    await relay.close()
  })

  it('a read under way when it restarts neither moves the position nor hands anything on', async () => {
    let finish: (p: OutboxTailPage) => void = () => {}
    const { relay, calls } = scripted([
      () =>
        new Promise((resolve) => {
          finish = resolve
        }),
    ])
    await relay.runOnce()
    const reading = relay.runOnce()
    relay.restart()
    finish(page('from the old server', { changed: [{ statusId: 'st_a', version: 3, types: [] }] }))
    await reading
    await relay.runOnce()
    assert.deepEqual(calls, [
      'start p1',
      'refreshAll',
      'read p1',
      'start p2',
      'refreshAll',
      'read p2',
    ])
    await relay.close()
  })

  it('a read that says its position came from another server: every stream reads again, and reading goes on from the position it gave', async () => {
    const { relay, calls, infos } = scripted([
      async () => page('q1', { restarted: true, complete: false }),
    ])
    await relay.runOnce()
    await relay.runOnce()
    await relay.runOnce()
    assert.deepEqual(calls, ['start p1', 'refreshAll', 'read p1', 'refreshAll', 'read q1'])
    assert.equal(infos.length, 1)
    assert.match(infos[0] as string, /another server/)
    await relay.close()
  })

  it('asks only for the statuses with streams here; one whose first stream came during the read reads for itself', async () => {
    const watched = ['st_a']
    const { relay, calls } = scripted(
      [
        async () => {
          watched.push('st_new')
          return page('q1', { changed: [{ statusId: 'st_a', version: 2, types: [] }] })
        },
      ],
      watched,
    )
    await relay.runOnce()
    await relay.runOnce()
    assert.deepEqual(calls, [
      'start p1',
      'refreshAll',
      'read p1 [st_a]',
      'refresh st_new',
      'relayed st_a',
    ])
    await relay.close()
  })
})
