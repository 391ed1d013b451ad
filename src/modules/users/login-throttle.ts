import { isIPv6 } from 'node:net'
import { LRUCache } from 'lru-cache'
import { type Clock, systemClock } from '../../lib/clock.ts'

/** Failed sign-ins one account takes in a window before it is refused for the rest of it. */
export const ACCOUNT_FAILURES = 5
/** Failed sign-ins one client address makes in a window, whatever the accounts. */
export const ADDRESS_FAILURES = 30
/** The window, from the first failure counted. */
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
 * Failed password sign-ins, counted per account (its folded e-mail, known or not, so that
 * the limit says nothing about whether an account exists) and per client address
 * (docs/accounts.md#locking-an-attacker-out). In this process's memory: each instance counts
 * its own, and a restart forgets. Bounded (LRU), so a flood of addresses cannot fill memory.
 */
export class LoginThrottle {
  readonly #failures: LRUCache<string, { count: number }>

  constructor({ clock = systemClock, max = 100_000 }: { clock?: Clock; max?: number } = {}) {
    this.#failures = new LRUCache({
      // note: as a size of one per entry, not lru-cache's `max`, which allocates room for all
      // `max` entries up front (about 5 MB for 100 000) (docs/performance.md#cold-start-and-memory)
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
   * Seconds until a sign-in for this account from this address may be tried again, or 0 when
   * it may be tried now.
   */
  retryAfter(emailKey: string, ip: string): number {
    const wait = (key: string, limit: number) =>
      (this.#failures.get(key)?.count ?? 0) >= limit ? this.#failures.getRemainingTTL(key) : 0
    const ms = Math.max(
      wait(`account ${emailKey}`, ACCOUNT_FAILURES),
      wait(`address ${addressKey(ip)}`, ADDRESS_FAILURES),
    )
    return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 0
  }

  /** Counts a failed sign-in against the account and the address. */
  failed(emailKey: string, ip: string): void {
    for (const key of [`account ${emailKey}`, `address ${addressKey(ip)}`]) {
      const entry = this.#failures.get(key)
      // note: the window runs from the first failure: counting does not extend it
      if (entry) entry.count += 1
      else this.#failures.set(key, { count: 1 })
    }
  }

  /** A correct password clears the account's count (never the address's: an attacker's own account would clear it). */
  succeeded(emailKey: string): void {
    this.#failures.delete(`account ${emailKey}`)
  }
}
