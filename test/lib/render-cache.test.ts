import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { RenderCache, type Rendered } from '../../src/lib/render-cache.ts'
import { testClock } from '../helpers/clock.ts'

// src/lib/render-cache.ts: the public views' render cache (docs/sharing.md#caching-of-public-views).

const view = (text: string): Rendered => ({
  body: text,
  etag: `"${text}"`,
  headers: { 'content-type': 'text/plain', etag: `"${text}"` },
})

function cache(options: { maxBytes?: number; recent?: number } = {}) {
  const clock = testClock()
  const watched = new Map<string, number>()
  const c = new RenderCache({
    maxBytes: options.maxBytes ?? 1_000_000,
    maxAgeMs: 1_000,
    clock,
    ...(options.recent !== undefined && { recent: options.recent }),
    watch: (owner) => {
      watched.set(owner, (watched.get(owner) ?? 0) + 1)
      return () => watched.set(owner, (watched.get(owner) ?? 0) - 1)
    },
  })
  return { c, clock, watched }
}

describe('RenderCache', () => {
  it('serves what was stored until its owner is invalidated; other owners stay', () => {
    const { c } = cache()
    assert.ok(c.store(c.begin(), 'a/1', 'a', view('a1')))
    assert.ok(c.store(c.begin(), 'a/2', 'a', view('a2')))
    assert.ok(c.store(c.begin(), 'b/1', 'b', view('b1')))
    assert.equal(c.get('a/1')?.etag, '"a1"')
    c.invalidate('a')
    assert.equal(c.get('a/1'), undefined)
    assert.equal(c.get('a/2'), undefined)
    assert.equal(c.get('b/1')?.etag, '"b1"')
  })

  it('a read that began before an invalidation of its owner stores nothing (it may hold the old state)', () => {
    const { c } = cache()
    const token = c.begin()
    c.invalidate('a') // the write commits while the read renders
    assert.equal(c.store(token, 'a/1', 'a', view('old')), false)
    assert.equal(c.get('a/1'), undefined)
    // an invalidation of another owner does not stop it
    const next = c.begin()
    c.invalidate('b')
    assert.ok(c.store(next, 'a/1', 'a', view('new')))
  })

  it('a read that began before more invalidations than it remembers stores nothing', () => {
    const { c } = cache({ recent: 4 })
    const token = c.begin()
    for (let i = 0; i < 5; i++) c.invalidate(`other-${i}`)
    assert.equal(c.store(token, 'a/1', 'a', view('a1')), false)
  })

  it('clear drops everything, and what was read before it is not stored after', () => {
    const { c } = cache()
    c.store(c.begin(), 'a/1', 'a', view('a1'))
    const token = c.begin()
    c.clear()
    assert.equal(c.get('a/1'), undefined)
    assert.equal(c.store(token, 'b/1', 'b', view('b1')), false)
  })

  it('an entry older than maxAgeMs is not served', () => {
    const { c, clock } = cache()
    c.store(c.begin(), 'a/1', 'a', view('a1'))
    clock.advance(1_000)
    assert.ok(c.get('a/1'))
    clock.advance(1)
    assert.equal(c.get('a/1'), undefined)
  })

  it('holds at most maxBytes: the least recently used go, and each owner is watched while it has entries', () => {
    const { c, watched } = cache({ maxBytes: 3 * (1_000 + 3 + 200) })
    for (const owner of ['a', 'b', 'c', 'd'])
      c.store(c.begin(), `${owner}/1`, owner, view(owner.repeat(1_000)))
    assert.equal(c.size, 3)
    assert.equal(c.get('a/1'), undefined, 'the least recently used went')
    assert.equal(watched.get('a'), 0, 'its watch ended with it')
    assert.equal(watched.get('d'), 1)
    c.invalidate('d')
    assert.equal(watched.get('d'), 0)
    assert.equal(c.watching, 2)
    // a body larger than the whole cache is not kept, nor watched
    assert.equal(c.store(c.begin(), 'e/1', 'e', view('e'.repeat(10_000))), false)
    assert.equal(watched.get('e'), 0)
  })

  it('through renders once, then answers from memory', async () => {
    const { c } = cache()
    let renders = 0
    const render = async () => {
      renders += 1
      return { owner: 'a', rendered: view('a1') }
    }
    await c.through('a/1', render)
    await c.through('a/1', render)
    assert.equal(renders, 1)
    await assert.rejects(
      c.through('x/1', async () => {
        throw new Error('not found')
      }),
    )
    assert.equal(c.get('x/1'), undefined)
  })
})
