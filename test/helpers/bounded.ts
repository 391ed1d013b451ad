/** How long a test waits for one thing before it fails, naming it (a bound, not a timing assertion). */
export const WAIT_MS = 20_000

/**
 * `promise`, or a failure that says what was waited for once `limitMs` has passed: every wait
 * in a test is bounded, so a broken step fails with its name instead of hanging the file.
 */
export function bounded<T>(
  what: string,
  promise: Promise<T>,
  limitMs = WAIT_MS,
  /** What to add to the failure (a child process's output so far). */
  detail?: () => string,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const more = detail ? `\n${detail()}` : ''
      reject(new Error(`gave up waiting for ${what} after ${limitMs} ms${more}`))
    }, limitMs)
  })
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
}

/** A failure of a wait that says what it waited for (a Playwright timeout names none). */
export const waitingFor =
  (what: string) =>
  (err: unknown): never => {
    throw new Error(`while waiting for ${what}: ${(err as Error).message}`, { cause: err })
  }
