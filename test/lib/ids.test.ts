import assert from 'node:assert/strict'
import { it } from 'node:test'
import { newId } from '../../src/lib/ids.ts'

it('an id is 21 URL-safe characters and never starts with "-" (it must not read as a CLI option)', () => {
  // with '-' allowed first, 1 id in 64 would start with it: 5000 ids miss that with p ≈ 1e-34
  for (let i = 0; i < 5000; i++) {
    const id = newId()
    assert.match(id, /^[A-Za-z0-9][A-Za-z0-9_-]{20}$/)
  }
})

it('an id draws from the whole alphabet: every letter and digit first, every URL-safe character after', () => {
  // 5000 ids: a character of 62 (first draws) or of 64 (100 000 later draws) left out by
  // chance has p < 1e-30; one the sampling can never draw is always caught
  const first = new Set<string>()
  const rest = new Set<string>()
  for (let i = 0; i < 5000; i++) {
    const id = newId()
    first.add(id[0] as string)
    for (const c of id.slice(1)) rest.add(c)
  }
  assert.equal(first.size, 62)
  assert.equal(rest.size, 64)
})

it('ids never repeat across many refills of the random pool they draw from', () => {
  // 20 000 ids draw 400 000 characters, many times the pool nanoid fills at once; a random
  // byte handed out twice would make ids repeat
  const ids = new Set<string>()
  for (let i = 0; i < 20_000; i++) ids.add(newId())
  assert.equal(ids.size, 20_000)
})
