import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'

/**
 * What a test's resources live as long as: the test's context `t`, or `suiteLifetime()` for
 * something a whole file or suite shares.
 */
export interface Lifetime {
  after(fn: () => unknown): void
}

const stacks = new WeakMap<Lifetime, (() => unknown)[]>()

/**
 * Undoes something when `t` ends. Later registrations run first (an app made in a temporary
 * folder is closed before the folder goes), and every one runs even when another fails.
 * note: node:test runs its own `after` hooks first-registered first; this is one such hook.
 */
export function defer(t: Lifetime, undo: () => unknown): void {
  let stack = stacks.get(t)
  if (!stack) {
    const own: (() => unknown)[] = []
    stack = own
    stacks.set(t, own)
    t.after(async () => {
      const errors: unknown[] = []
      for (let fn = own.pop(); fn; fn = own.pop()) {
        try {
          await fn()
        } catch (err) {
          errors.push(err)
        }
      }
      if (errors.length === 1) throw errors[0]
      if (errors.length > 1) throw new AggregateError(errors, 'cleanup failed')
    })
  }
  stack.push(undo)
}

/** A new empty folder under the system's temporary folder, removed when `t` ends. */
export function tempDir(t: Lifetime, prefix = 'statusd-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  defer(t, () => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * A lifetime for what a whole file or suite shares (an app made in its `before` hook): it
 * ends with the suite. Call it where the suite is defined, not inside a hook.
 * note: node:test's `after` called from inside a running hook does not wait for the suite.
 */
export function suiteLifetime(): Lifetime {
  const undo: (() => unknown)[] = []
  after(async () => {
    for (const fn of undo) await fn()
  })
  return { after: (fn) => void undo.push(fn) }
}

/** A lifetime for a script run outside the test runner: `end()` undoes what it holds. */
export function scriptLifetime(): Lifetime & { end(): Promise<void> } {
  const undo: (() => unknown)[] = []
  return {
    after: (fn) => void undo.push(fn),
    async end() {
      for (const fn of undo.splice(0)) await fn()
    },
  }
}
