import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { ApiError } from '../../src/lib/errors.ts'
import { containsLink } from '../../src/lib/links.ts'
import { planOf } from '../../src/modules/plans/plan-of.ts'
import { assertPlanAllows } from '../../src/modules/plans/plan-rules.ts'
import {
  DEFAULT_PLANS,
  loadPlansFile,
  mostCapablePlan,
  type Plan,
  type Plans,
  shareLinkDaysOf,
} from '../../src/modules/plans/plans.ts'
import { retentionCutoff } from '../../src/modules/statuses/history.service.ts'

// The plan rules (docs/api.md#plans) as pure functions: link detection, the feature gates, the plan
// the first user gets, and the operator's plans file.

const plan = (overrides: Partial<Plan> = {}): Plan => ({
  descriptionLinks: false,
  accessSettings: false,
  maxStatuses: 25,
  requestsPerMinute: 60,
  historyDays: 7,
  ...overrides,
})
const FREE = DEFAULT_PLANS.free as Plan
const PRO = DEFAULT_PLANS.pro as Plan

describe('containsLink (URLs, bare domains, e-mail addresses)', () => {
  for (const text of [
    'https://example.com',
    'see http://example.com/status?x=1 for more',
    'ftp://files.example.net',
    'example.com',
    'Details at example.com.',
    'EXAMPLE.COM',
    'www.example.org',
    'status.example.co.uk/path',
    'ops@example.com',
    'mailto:ops@example.com',
    'münchen.de',
    'пример.рф',
    '(example.io)',
    // newer generic top-level domains (IANA's list, not only linkify-it's short default one)
    'example.dev',
    'www.example.app',
    'status.example.xyz/room-4',
    'mysite.tech',
    '//example.com/x',
    // schemes linkify-it does not know, and bare domains with a port
    'sftp://example.com/x',
    'git://example.com/repo.git',
    'ssh://host.example.com',
    'wss://live.example.com/feed',
    'Open https:example.com',
    'example.com:8080/path',
    'Docs: rooms.example.com:443/desk',
    'sftp://example.com:22/x',
    'at example.com:8080',
  ])
    it(`finds a link in ${JSON.stringify(text)}`, () => assert.equal(containsLink(text), true))

  for (const text of [
    '',
    'OCCUPIED',
    'Floor 2, room 4. Ask Bob.',
    'Back at 3.30 p.m.',
    'version 1.2.3',
    'ratio 3:4, 50%',
    'e.g. the big room',
    'a@b',
    'line one\nline two',
    '🟢 all good',
    'see node.js and main.go',
    'Meeting in room 4.1',
    'i.e. now',
    'Status: ok, back at 10:30',
    'build 4.2:17 done',
    'ratio 16:9/4:3',
    'note:see room 4',
  ])
    it(`finds no link in ${JSON.stringify(text)}`, () => assert.equal(containsLink(text), false))
})

/** Runs `fn` and returns the ApiError it throws (failing when it throws none or another). */
function apiErrorOf(fn: () => void): ApiError {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof ApiError, `an ApiError, got ${err}`)
    return err
  }
  assert.fail('expected an ApiError')
}

describe('assertPlanAllows (the plan feature gates)', () => {
  it('a link in the description is 402 planFeatureUnavailable on a plan without links', () => {
    const err = apiErrorOf(() => assertPlanAllows(FREE, { description: 'see example.com' }))
    assert.equal(err.statusCode, 402)
    assert.equal(err.errorCode, 'planFeatureUnavailable')
    assert.deepEqual(
      err.errors?.map((e) => e.field),
      ['description'],
    )
  })

  it('plain text is fine on a plan without links', () => {
    assertPlanAllows(FREE, { description: 'Floor 2, room 4' })
    assertPlanAllows(FREE, { description: '' })
  })

  it('links are fine on a plan with links', () => {
    assertPlanAllows(PRO, { description: 'https://example.com and ops@example.com' })
    assertPlanAllows(plan({ descriptionLinks: true }), { description: 'example.com' })
  })

  it('nothing sent, nothing checked', () => {
    assertPlanAllows(FREE, {})
    assertPlanAllows(FREE, {}, { accessTypeUserList: 'public', accessTypeHistory: 'public' })
  })

  for (const [field, value] of [
    ['accessTypeUserList', 'public'],
    ['accessTypeUserList', 'private'],
    ['accessTypeHistory', 'public'],
    ['accessTypeHistory', 'owner'],
  ] as const)
    it(`${field} ${value} (not the default) is 402 on a plan without access settings`, () => {
      const err = apiErrorOf(() => assertPlanAllows(FREE, { [field]: value }))
      assert.equal(err.statusCode, 402)
      assert.equal(err.errorCode, 'planFeatureUnavailable')
      assert.deepEqual(
        err.errors?.map((e) => e.field),
        [field],
      )
    })

  it('the defaults (owner, private) are fine on a plan without access settings', () => {
    assertPlanAllows(FREE, { accessTypeUserList: 'owner', accessTypeHistory: 'private' })
  })

  it('the current values are fine on a plan without access settings', () => {
    const current = { accessTypeUserList: 'public', accessTypeHistory: 'owner' }
    assertPlanAllows(FREE, { accessTypeUserList: 'public', accessTypeHistory: 'owner' }, current)
    assertPlanAllows(FREE, { accessTypeUserList: 'owner', accessTypeHistory: 'private' }, current)
    assert.throws(
      () => assertPlanAllows(FREE, { accessTypeUserList: 'private' }, current),
      (err) => err instanceof ApiError && err.errorCode === 'planFeatureUnavailable',
    )
  })

  it('any access setting is fine on a plan with access settings', () => {
    assertPlanAllows(PRO, { accessTypeUserList: 'public', accessTypeHistory: 'public' })
    assertPlanAllows(plan({ accessSettings: true }), { accessTypeUserList: 'private' })
  })

  it('the two features are gated independently', () => {
    const linksOnly = plan({ descriptionLinks: true })
    assertPlanAllows(linksOnly, { description: 'example.com' })
    assert.throws(() => assertPlanAllows(linksOnly, { accessTypeHistory: 'public' }))
    const settingsOnly = plan({ accessSettings: true })
    assertPlanAllows(settingsOnly, { accessTypeHistory: 'public' })
    assert.throws(() => assertPlanAllows(settingsOnly, { description: 'example.com' }))
  })
})

describe('DEFAULT_PLANS (the built-in plans)', () => {
  it('free: no links, no access settings, 25 statuses, 60 req/min, 7 days, links for 7 days, 3 boards, 25 notification rules', () =>
    assert.deepEqual(DEFAULT_PLANS.free, {
      descriptionLinks: false,
      accessSettings: false,
      maxStatuses: 25,
      requestsPerMinute: 60,
      historyDays: 7,
      shareLinkDays: 7,
      maxBoards: 3,
      maxNotificationRules: 25,
    }))
  it('pro: all features, 10 000 statuses, 1 200 req/min, 365 days, links for 30 days, 50 boards, 10 000 notification rules', () =>
    assert.deepEqual(DEFAULT_PLANS.pro, {
      descriptionLinks: true,
      accessSettings: true,
      maxStatuses: 10_000,
      requestsPerMinute: 1_200,
      historyDays: 365,
      shareLinkDays: 30,
      maxBoards: 50,
      maxNotificationRules: 10_000,
    }))
})

describe('mostCapablePlan (the first user gets the most capable plan)', () => {
  const unlimited = plan({
    descriptionLinks: true,
    accessSettings: true,
    maxStatuses: null,
    requestsPerMinute: null,
    historyDays: null,
  })

  it('is pro among the built-in plans', () => assert.equal(mostCapablePlan(DEFAULT_PLANS), 'pro'))

  it('is an operator-added unlimited plan when there is one', () =>
    assert.equal(mostCapablePlan({ ...DEFAULT_PLANS, unlimited }), 'unlimited'))

  it('does not depend on the order of the table', () =>
    assert.equal(mostCapablePlan({ unlimited, pro: PRO, free: FREE }), 'unlimited'))

  it('is the only plan of a one-plan table', () =>
    assert.equal(mostCapablePlan({ basic: FREE }), 'basic'))

  it('features count before limits', () => {
    const plans: Plans = {
      big: plan({ maxStatuses: null, requestsPerMinute: null, historyDays: null }),
      featured: plan({ descriptionLinks: true, accessSettings: true, maxStatuses: 1 }),
    }
    assert.equal(mostCapablePlan(plans), 'featured')
  })

  it('unlimited (null) beats any number', () => {
    const plans: Plans = {
      huge: plan({ maxStatuses: 1_000_000_000 }),
      endless: plan({ maxStatuses: null }),
    }
    assert.equal(mostCapablePlan(plans), 'endless')
  })

  it('later limits break ties: requests per minute, then history days', () => {
    assert.equal(
      mostCapablePlan({ a: plan({ requestsPerMinute: 10 }), b: plan({ requestsPerMinute: 20 }) }),
      'b',
    )
    assert.equal(
      mostCapablePlan({ a: plan({ historyDays: 30 }), b: plan({ historyDays: 7 }) }),
      'a',
    )
  })

  it('equal plans are decided by name, so the answer is stable', () =>
    assert.equal(mostCapablePlan({ zeta: PRO, alpha: PRO, mid: PRO }), 'alpha'))
})

describe('loadPlansFile (PLANS_FILE)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'statusd-plans-'))
  after(() => rmSync(dir, { recursive: true, force: true }))
  let n = 0
  const file = (content: string): string => {
    n += 1
    const path = join(dir, `plans-${n}.json`)
    writeFileSync(path, content)
    return path
  }
  const plansJson = (plans: Record<string, unknown>) => file(JSON.stringify(plans))

  /** Loading `path` fails with a message naming the file and matching every pattern. */
  function rejects(path: string, ...patterns: RegExp[]): void {
    assert.throws(
      () => loadPlansFile(path),
      (err: Error) => {
        assert.ok(err.message.startsWith(`PLANS_FILE ${path}: `), err.message)
        for (const p of patterns) assert.match(err.message, p)
        assert.ok(!err.message.includes('\n'), 'one line')
        return true
      },
    )
  }

  it('reads a valid file; it replaces the built-in table', () => {
    const plans = {
      basic: FREE,
      team: plan({ descriptionLinks: true, maxStatuses: 500, requestsPerMinute: 600 }),
      unlimited: plan({ maxStatuses: null, requestsPerMinute: null, historyDays: null }),
    }
    assert.deepEqual(loadPlansFile(plansJson(plans)), plans)
  })

  it('plan names may hold lowercase letters, digits, _ and -', () => {
    const plans = { 'pro-2026_b': PRO }
    assert.deepEqual(loadPlansFile(plansJson(plans)), plans)
  })

  it('a missing file is reported with its path', () =>
    rejects(join(dir, 'nope.json'), /ENOENT|no such file/))

  it('broken JSON is reported', () => rejects(file('{"free": {'), /JSON/))

  it('a file that is not an object is refused', () => {
    rejects(file('[]'), /object/)
    rejects(file('"free"'), /object/)
  })

  it('an empty table is refused', () => rejects(file('{}'), /no plan/))

  it('a missing property is named', () =>
    rejects(plansJson({ free: { descriptionLinks: true } }), /\/free/, /maxStatuses/))

  it('a wrong type is named', () =>
    rejects(plansJson({ free: { ...FREE, descriptionLinks: 'yes' } }), /\/free\/descriptionLinks/))

  it('a negative limit is refused', () =>
    rejects(plansJson({ free: { ...FREE, maxStatuses: -1 } }), /\/free\/maxStatuses/))

  it('a fractional limit is refused', () =>
    rejects(plansJson({ free: { ...FREE, requestsPerMinute: 1.5 } }), /\/free\/requestsPerMinute/))

  it('historyDays past 1 000 000 days is refused (null keeps history forever)', () => {
    rejects(
      plansJson({ free: { ...FREE, historyDays: 200_000_000 } }),
      /\/free\/historyDays/,
      /1000000/,
    )
    const plans = { free: { ...FREE, historyDays: 1_000_000 } }
    assert.deepEqual(loadPlansFile(plansJson(plans)), plans)
    // the longest retention still has a cut-off that is a date
    assert.match(String(retentionCutoff(plans.free)), /^-?\d+-\d\d-\d\dT/)
  })

  it('shareLinkDays: a whole number of days from 1 to 3 650; never null (a private link always ends)', () => {
    rejects(plansJson({ free: { ...FREE, shareLinkDays: 0 } }), /\/free\/shareLinkDays/)
    rejects(plansJson({ free: { ...FREE, shareLinkDays: 3_651 } }), /\/free\/shareLinkDays/)
    rejects(plansJson({ free: { ...FREE, shareLinkDays: 1.5 } }), /\/free\/shareLinkDays/)
    rejects(plansJson({ free: { ...FREE, shareLinkDays: null } }), /\/free\/shareLinkDays/)
    rejects(plansJson({ free: { ...FREE, shareLinkDays: '7' } }), /\/free\/shareLinkDays/)
    const plans = { team: { ...PRO, shareLinkDays: 3_650 } }
    assert.deepEqual(loadPlansFile(plansJson(plans)), plans)
    assert.equal(shareLinkDaysOf(plans.team), 3_650)
  })

  it('shareLinkDays may be left out (a plans file from before private links): 7 days', () => {
    const { shareLinkDays: _, ...older } = PRO
    const loaded = loadPlansFile(plansJson({ team: older }))
    assert.equal(shareLinkDaysOf(loaded.team as Plan), 7)
  })

  it('a limit past the largest safe integer is refused', () =>
    rejects(plansJson({ free: { ...FREE, maxStatuses: 2 ** 60 } }), /\/free\/maxStatuses/))

  it('an unknown plan property is refused, naming it as unknown', () =>
    rejects(plansJson({ free: { ...FREE, maxStatus: 3 } }), /maxStatus\b/, /unknown|not a known/i))

  it('a plan name outside [a-z][a-z0-9_-]* is refused, naming it', () => {
    rejects(plansJson({ 'Free Plan': FREE }), /Free Plan/, /plan name/i)
    rejects(plansJson({ '1st': FREE }), /1st/, /plan name/i)
  })
})

describe('planOf (a user whose plan left the plans file is treated as on free)', () => {
  const plans: Plans = { free: FREE, pro: PRO }

  it('finds the plan by name', () => assert.equal(planOf(plans, 'pro'), PRO))

  it('a plan no longer in the table is free', () => assert.equal(planOf(plans, 'tiny'), FREE))

  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
    it(`a removed plan named ${name} is free, not Object.prototype's ${name}`, () =>
      assert.equal(planOf(plans, name), FREE))

  it('without a free plan, the first plan', () => assert.equal(planOf({ pro: PRO }, 'gone'), PRO))
})
