import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.ts'

describe('DATABASE_POOL_SIZE', () => {
  it('defaults to 10; empty means unset', () => {
    assert.equal(loadConfig({}).databasePoolSize, 10)
    assert.equal(loadConfig({ DATABASE_POOL_SIZE: '' }).databasePoolSize, 10)
  })

  it('takes an integer from 1 to 1000', () => {
    assert.equal(loadConfig({ DATABASE_POOL_SIZE: '1' }).databasePoolSize, 1)
    assert.equal(loadConfig({ DATABASE_POOL_SIZE: '40' }).databasePoolSize, 40)
    assert.equal(loadConfig({ DATABASE_POOL_SIZE: '1000' }).databasePoolSize, 1000)
  })

  for (const bad of ['0', '-1', '2.5', 'ten', '1001'])
    it(`refuses "${bad}" with a one-line message`, () =>
      assert.throws(
        () => loadConfig({ DATABASE_POOL_SIZE: bad }),
        (err) =>
          err instanceof ConfigError && /DATABASE_POOL_SIZE must be an integer/.test(err.message),
      ))
})
