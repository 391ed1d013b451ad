import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { after } from 'node:test'
import { type Browser, type BrowserContext, chromium } from 'playwright-core'
import { makeApp, type TestApp } from './app.ts'
import type { Lifetime } from './cleanup.ts'

/** The Debian package's browser; nothing is ever downloaded. */
export const CHROMIUM = '/usr/bin/chromium'

/** For `{ skip }`: false when Chromium is there, else the reason, in plain words. */
export const chromiumMissing = (): string | false =>
  existsSync(CHROMIUM)
    ? false
    : `${CHROMIUM} is not installed (apt-get install -y chromium); browser tests skipped`

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** Headless Chromium, which holds several profiles at once (`browser.newContext()`). */
const launchBrowser = (args: string[] = []): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...ARGS, ...args] })

// One Chromium for a test file: launched when its first test asks for a browser, closed
// after its last test. Each test gets contexts of its own in it (cookies, storage, cache,
// permissions and service workers of their own, as a fresh profile has), which costs a
// fraction of a browser started for each. A process that is not a test file (a script such
// as take-screenshots.ts) launches a browser for each context instead, closed with it.
const inTestFile = Boolean(process.argv[1]?.endsWith('.test.ts'))
let fileBrowser: Promise<Browser> | undefined
if (inTestFile)
  after(async () => {
    const browser = fileBrowser
    fileBrowser = undefined
    await (await browser?.catch(() => undefined))?.close()
  })

/**
 * The test file's Chromium (launched on first use, closed after the file's last test), for
 * tests that open contexts themselves; outside a test file, a browser the caller closes.
 */
export function fileChromium(): Promise<Browser> {
  if (!inTestFile) return launchBrowser()
  if (!fileBrowser) {
    const launched = launchBrowser()
    fileBrowser = launched
    // a browser that failed to start or went away is not handed to the next test
    const forget = () => {
      if (fileBrowser === launched) fileBrowser = undefined
    }
    launched.then((browser) => browser.on('disconnected', forget), forget)
  }
  return fileBrowser
}

/**
 * A fresh browser profile (a context of its own in the file's Chromium, see fileChromium)
 * in headless Chromium, gone again on close. `args` (command-line switches) need a browser
 * of their own, launched for this context.
 */
export async function launchChromium(
  options: {
    viewport?: { width: number; height: number }
    deviceScaleFactor?: number
    colorScheme?: 'light' | 'dark'
    /** More command-line switches (e.g. `--host-resolver-rules` for a hostname of a test's own). */
    args?: string[]
  } = {},
): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const own = options.args !== undefined || !inTestFile
  const browser = own ? await launchBrowser(options.args) : await fileChromium()
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1000, height: 800 },
    deviceScaleFactor: options.deviceScaleFactor ?? 1,
    colorScheme: options.colorScheme ?? 'light',
    // one language and time zone, so pages (and screenshots) look the same everywhere
    locale: 'en-GB',
    timezoneId: 'UTC',
  })
  let closing: Promise<void> | undefined
  return {
    context,
    close() {
      closing ??= (async () => {
        await context.close()
        if (own) await browser.close()
      })()
      return closing
    },
  }
}

/** An app listening on 127.0.0.1 at a random port, for a browser to open. */
export async function listeningApp(ctx: Lifetime): Promise<{ t: TestApp; base: string }> {
  const t = await makeApp(ctx)
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = t.app.server.address() as AddressInfo
  return { t, base: `http://127.0.0.1:${port}` }
}
