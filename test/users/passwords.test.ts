import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { addressKey } from '../../src/modules/users/login-throttle.ts'
import {
  accountWords,
  commonPasswordListSize,
  hashPassword,
  passwordProblem,
  SCRYPT_PARAMS,
  verifyPassword,
} from '../../src/modules/users/passwords.ts'

import { astralPassword } from '../helpers/accounts.ts'

// docs/accounts.md#users and docs/decisions/0010-password-hashing.md

describe('password rules', () => {
  it('12 to 256 code points: 11 and 257 are refused, 12 and 256 pass (astral characters count one)', async () => {
    assert.match((await passwordProblem(astralPassword(11))) ?? '', /at least 12/)
    assert.equal(await passwordProblem(astralPassword(12)), undefined)
    assert.equal(await passwordProblem(astralPassword(256)), undefined)
    assert.match((await passwordProblem(astralPassword(257))) ?? '', /at most 256/)
  })

  it('a lone surrogate is refused (it would hash as U+FFFD)', async () => {
    assert.match((await passwordProblem(`${'a'.repeat(12)}\ud800`)) ?? '', /well-formed/)
  })
})

describe('passwords are refused when found anywhere in a large common-password list or scored below 3 of 4 by a strength estimator; the error names why (finding 12)', () => {
  it(`the list holds at least 100 000 entries, every one checked`, async () => {
    assert.ok((await commonPasswordListSize()) >= 100_000)
  })

  const table: { password: string; refused: RegExp | undefined; why: string }[] = [
    { password: 'password1234', refused: /list of common passwords/, why: 'in the list' },
    {
      password: 'PassWord1234',
      refused: /list of common passwords/,
      why: 'in the list, other case',
    },
    {
      password: 'QWERTY123456',
      refused: /list of common passwords/,
      why: 'in the list, other case',
    },
    // far down the list: the 10 000 most common did not hold it
    { password: 'LeaveMeAlone', refused: /list of common passwords/, why: 'in the list' },
    {
      password: 'Password1234!',
      refused: /too easy to guess .*scores it [0-2] of 4/,
      why: 'not in the list, guessable',
    },
    { password: 'abcdefghijklmn', refused: /too easy to guess/, why: 'a sequence' },
    { password: 'plum tree at dusk 42', refused: undefined, why: 'a passphrase' },
    { password: 'correct horse battery staple', refused: undefined, why: 'a passphrase' },
  ]
  for (const { password, refused, why } of table)
    it(`${JSON.stringify(password)} (${why}): ${refused ? 'refused' : 'accepted'}`, async () => {
      const problem = await passwordProblem(password)
      if (refused === undefined) assert.equal(problem, undefined)
      else assert.match(problem ?? '', refused)
    })

  it("a password built on the account's own name and e-mail scores lower", async () => {
    const password = 'ada lovelace 1815'
    assert.equal(await passwordProblem(password), undefined)
    assert.match(
      (await passwordProblem(password, accountWords('ada.lovelace@example.com', 'Ada Lovelace'))) ??
        '',
      /too easy to guess/,
    )
  })
})

describe('password hashes', () => {
  it('describe themselves: $scrypt$ln=14,r=8,p=5$<salt>$<hash>', async () => {
    const stored = await hashPassword('correct horse battery staple')
    assert.match(stored, /^\$scrypt\$ln=14,r=8,p=5\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    assert.deepEqual(SCRYPT_PARAMS, { ln: 14, r: 8, p: 5 })
  })

  it('verify the right password, refuse a wrong one; two hashes of one password differ (salt)', async () => {
    const a = await hashPassword('correct horse battery staple')
    const b = await hashPassword('correct horse battery staple')
    assert.notEqual(a, b)
    assert.equal(await verifyPassword(a, 'correct horse battery staple'), true)
    assert.equal(await verifyPassword(a, 'correct horse battery stapler'), false)
  })

  it('a hash made with other parameters still verifies (parameters can change later)', async () => {
    const old = await hashPassword('correct horse battery staple', { ln: 10, r: 8, p: 1 })
    assert.match(old, /^\$scrypt\$ln=10,r=8,p=1\$/)
    assert.equal(await verifyPassword(old, 'correct horse battery staple'), true)
  })

  it('the same password typed in another Unicode form matches (NFKC)', async () => {
    const stored = await hashPassword('café au lait 1234')
    assert.equal(await verifyPassword(stored, 'cafe\u0301 au lait 1234'), true)
  })

  it('a stored value that is no hash this code knows matches nothing', async () => {
    for (const stored of [
      '',
      'plain text',
      '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA',
      '$scrypt$ln=99,r=8,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA',
    ])
      assert.equal(await verifyPassword(stored, 'anything at all'), false, stored)
  })
})

describe('login throttle addresses', () => {
  it('an IPv6 address counts by its /64; IPv4 as it is', () => {
    assert.equal(addressKey('2001:db8:1:2::1'), '2001:db8:1:2::/64')
    assert.equal(addressKey('2001:0db8:0001:0002:ffff:0:0:1'), '2001:db8:1:2::/64')
    assert.equal(addressKey('::1'), '0:0:0:0::/64')
    assert.equal(addressKey('203.0.113.7'), '203.0.113.7')
    assert.equal(addressKey('::ffff:203.0.113.7'), '::ffff:203.0.113.7')
  })
})
