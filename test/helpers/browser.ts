import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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

/** Headless Chromium with a fresh profile directory, removed again on close. */
export async function launchChromium(
  options: {
    viewport?: { width: number; height: number }
    deviceScaleFactor?: number
    colorScheme?: 'light' | 'dark'
    /** More command-line switches (e.g. `--host-resolver-rules` for a hostname of a test's own). */
    args?: string[]
  } = {},
): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'statusd-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...ARGS, ...(options.args ?? [])],
    viewport: options.viewport ?? { width: 1000, height: 800 },
    deviceScaleFactor: options.deviceScaleFactor ?? 1,
    colorScheme: options.colorScheme ?? 'light',
    // one language and time zone, so pages (and screenshots) look the same everywhere
    locale: 'en-GB',
    timezoneId: 'UTC',
  })
  return {
    context,
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

/**
 * Headless Chromium that holds several profiles at once (`browser.newContext()`, each with
 * cookies of its own): the journeys (test/helpers/journey.ts), where each person, and each
 * screen size, is a context of its own.
 */
export function launchChromiumBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS })
}

/** An app listening on 127.0.0.1 at a random port, for a browser to open. */
export async function listeningApp(ctx: Lifetime): Promise<{ t: TestApp; base: string }> {
  const t = await makeApp(ctx)
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = t.app.server.address() as AddressInfo
  return { t, base: `http://127.0.0.1:${port}` }
}
