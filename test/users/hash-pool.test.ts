import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { describe, it } from 'node:test'
import { ApiError } from '../../src/lib/errors.ts'
import {
  HashPool,
  hashPassword,
  hashPool,
  verifyPassword,
} from '../../src/modules/users/passwords.ts'
import { POOL_RETRY_AFTER_S } from '../../src/modules/users/thread-pool.ts'

// docs/accounts.md#password-hashing and docs/security.md (finding 4, sign-ins stall writes):
// password hashing runs on a bounded pool of its own.

const CHEAP = { ln: 4, r: 8, p: 1 }

describe('password hashing runs on a bounded pool of its own (finding 4)', () => {
  it("the service's pool computes at most one hash per core at a time, with a short queue", () => {
    assert.equal(hashPool.threads, availableParallelism())
    assert.ok(hashPool.queue >= 1 && hashPool.queue <= 4 * hashPool.threads)
  })

  it('a full pool refuses the next hash at once: 429 tooManyRequests with Retry-After; the admitted ones complete', async (ctx) => {
    const pool = new HashPool({ threads: 1, queue: 1 })
    ctx.after(() => pool.close())
    // asked for in one step: one computes, one waits, the third finds the pool full
    const asked = [1, 2, 3].map(() => hashPassword('correct horse battery staple', CHEAP, pool))
    const [first, second, third] = await Promise.allSettled(asked)
    assert.equal(third?.status, 'rejected')
    const error = (third as PromiseRejectedResult).reason
    assert.ok(error instanceof ApiError)
    assert.equal(error.statusCode, 429)
    assert.equal(error.errorCode, 'tooManyRequests')
    assert.equal(error.headers?.['retry-after'], String(POOL_RETRY_AFTER_S))
    for (const done of [first, second]) {
      assert.equal(done?.status, 'fulfilled')
      const stored = (done as PromiseFulfilledResult<string>).value
      assert.equal(await verifyPassword(stored, 'correct horse battery staple', pool), true)
    }
    assert.equal(pool.pending, 0, 'a place is given back when its hash ends')
  })

  it("hashes take no thread of libuv's pool (which writes and their fsyncs wait on)", {
    skip: !existsSync('/proc/self/task') && 'needs /proc (Linux)',
  }, () => {
    // a process of its own, whose libuv pool nothing else has started: libuv names its
    // threads, and starts them on first use
    const module = new URL('../../src/modules/users/passwords.ts', import.meta.url).href
    const threads = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { readdirSync, readFileSync } from 'node:fs'
         import { hashPassword, verifyPassword } from '${module}'
         const stored = await hashPassword('correct horse battery staple', ${JSON.stringify(CHEAP)})
         await verifyPassword(stored, 'another password')
         const names = readdirSync('/proc/self/task').map((t) => readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim())
         process.stdout.write(JSON.stringify(names))`,
      ],
      { encoding: 'utf8' },
    )
    const names: string[] = JSON.parse(threads)
    assert.ok(names.length > 1, threads)
    assert.deepEqual(
      names.filter((n) => n.startsWith('libuv')),
      [],
      `threads: ${names.join(', ')}`,
    )
  })
})
