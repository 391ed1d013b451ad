import { isIPv6 } from 'node:net'
import { LRUCache } from 'lru-cache'
import { type Clock, systemClock } from '../../lib/clock.ts'

/**
 * Password attempts one account takes in a window before it is refused for the rest of it
 * (a correct password clears the count).
 */
export const ACCOUNT_FAILURES = 5
/** Password attempts one client address makes in a window, whatever the accounts (a correct one is given back). */
export const ADDRESS_FAILURES = 30
/** The window, from the first attempt counted. */
export const FAILURE_WINDOW_MS = 15 * 60_000

/**
 * An IPv6 address by its /64 (one host commonly holds a whole /64, so counting single
 * addresses would give it 2^64 times the allowance); an IPv4 one as it is.
 */
export function addressKey(ip: string): string {
  if (!isIPv6(ip) || ip.includes('.')) return ip
  const [head = '', tail] = ip.toLowerCase().split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}

/**
 * Password sign-in attempts, counted per account (its folded e-mail, known or not, so that
 * the limit says nothing about whether an account exists) and per client address
 * (docs/accounts.md#locking-an-attacker-out). An attempt is counted *before* its password is
 * judged, so a burst of concurrent sign-ins judges no more passwords than the limit; a correct
 * password then gives back what only failures should cost. In this process's memory: each
 * instance counts its own, and a restart forgets. Bounded (LRU), so a flood of addresses
 * cannot fill memory.
 */
export class LoginThrottle {
  readonly #attempts: LRUCache<string, { count: number }>

  constructor({ clock = systemClock, max = 100_000 }: { clock?: Clock; max?: number } = {}) {
    this.#attempts = new LRUCache({
      // note: as a size of one per entry, not lru-cache's `max`, which allocates room for all
      // `max` entries up front, memory held from start (docs/performance.md#cold-start-and-memory)
      maxSize: max,
      sizeCalculation: () => 1,
      ttl: FAILURE_WINDOW_MS,
      perf: clock,
      ttlAutopurge: false,
      // note: read the clock on every check (a test moves it by hand)
      ttlResolution: 0,
    })
  }

  /**
   * Counts an attempt for this account from this address and answers 0, when both are under
   * their limits; otherwise counts nothing and answers the seconds until one may be tried.
   * The check and the count happen in one synchronous step: no other attempt comes between.
   */
  attempt(emailKey: string, ip: string): number {
    const limits: [string, number][] = [
      [`account ${emailKey}`, ACCOUNT_FAILURES],
      [`address ${addressKey(ip)}`, ADDRESS_FAILURES],
    ]
    let ms = 0
    for (const [key, limit] of limits)
      if ((this.#attempts.get(key)?.count ?? 0) >= limit)
        ms = Math.max(ms, this.#attempts.getRemainingTTL(key))
    if (ms > 0) return Math.max(1, Math.ceil(ms / 1000))
    for (const [key] of limits) {
      const entry = this.#attempts.get(key)
      // note: the window runs from the first attempt: counting does not extend it
      if (entry) entry.count += 1
      else this.#attempts.set(key, { count: 1 })
    }
    return 0
  }

  /** Gives back an attempt whose password was never judged (or was right, for the address). */
  #giveBack(key: string): void {
    const entry = this.#attempts.get(key)
    if (entry && entry.count > 0) entry.count -= 1
  }

  /** An attempt counted by `attempt` whose password was not judged after all (the pool was full). */
  refund(emailKey: string, ip: string): void {
    this.#giveBack(`account ${emailKey}`)
    this.#giveBack(`address ${addressKey(ip)}`)
  }

  /**
   * A correct password: the account's count is cleared, and the address gets this attempt back
   * (only failures count against it; clearing it would let an attacker's own account clear it).
   */
  succeeded(emailKey: string, ip: string): void {
    this.#attempts.delete(`account ${emailKey}`)
    this.#giveBack(`address ${addressKey(ip)}`)
  }
}
