import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import type { ParsedMail } from 'mailparser'
import type { Page } from 'playwright-core'
import { DEFAULT_PLANS } from '../../src/modules/plans/plans.ts'
import { tempDir } from './cleanup.ts'
import type { Journey } from './journey.ts'

// What the people of the journeys (test/journeys/) do often, on top of the journey harness
// (test/helpers/journey.ts): reach a screen, sign in on the sign-in screen, answer a dialog,
// follow a mailed link, hold a passkey.

/**
 * A plans file (PLANS_FILE) of the built-in plans with the per-user rate limit off: a journey
 * clicks through screens far faster than a person, and the free plan's 60 requests a minute
 * would refuse the app's own requests within a minute of it.
 */
export function plansWithoutRateLimit(t: { after(fn: () => unknown): void }): string {
  const file = path.join(tempDir(t, 'statusd-plans-'), 'plans.json')
  const plans = Object.fromEntries(
    Object.entries(DEFAULT_PLANS).map(([name, plan]) => [
      name,
      { ...plan, requestsPerMinute: null },
    ]),
  )
  writeFileSync(file, JSON.stringify(plans))
  return file
}

/** Waits until the screen's heading says `text` (each screen has one h1). */
export async function onScreen(page: Page, text: string | RegExp): Promise<void> {
  await page.locator('main h1').filter({ hasText: text }).waitFor()
}

/** Goes to a screen through the app's navigation, as a person does. */
export async function goTo(page: Page, link: string, heading: string | RegExp = link) {
  await page.getByRole('link', { name: link, exact: true }).first().click()
  await onScreen(page, heading)
}

/** The next mail, checked to go to `to` alone, and its link under `origin + prefix`. */
export async function mailedLink(
  j: Journey,
  to: string,
  origin: string,
  prefix: string,
): Promise<{ mail: ParsedMail; link: string }> {
  const mail = await j.mail()
  const addresses =
    mail.to && !Array.isArray(mail.to)
      ? mail.to.value.map((a) => a.address?.toLowerCase() ?? '')
      : []
  assert.deepEqual(addresses, [to.toLowerCase()], `"${mail.subject}" went to ${to}`)
  const text = mail.text ?? ''
  const link = text.split(/\s+/).find((word) => word.startsWith(origin + prefix))
  assert.ok(link, `a link under ${origin}${prefix} in:\n${text}`)
  return { mail, link }
}

/** Signs in on the sign-in screen with an address and a password, as a person types them. */
export async function signInWithPassword(
  page: Page,
  origin: string,
  email: string,
  password: string,
): Promise<void> {
  await page.goto(`${origin}/sign-in`)
  await onScreen(page, 'Sign in')
  await page.getByLabel('E-mail').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await onScreen(page, 'Board')
}

/** Signs up on the sign-up screen (SIGNUP=open), as a person types it. */
export async function signUpWithPage(
  page: Page,
  origin: string,
  person: { name: string; email: string; password: string },
): Promise<void> {
  await page.goto(`${origin}/sign-up`)
  await onScreen(page, 'Create an account')
  await page.getByLabel('Name').fill(person.name)
  await page.getByLabel('E-mail').fill(person.email)
  await page.getByLabel('Password').fill(person.password)
  await page.getByRole('button', { name: 'Create account' }).click()
  await onScreen(page, 'Board')
}

/** Signs out with the header's button. */
export async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()
  await onScreen(page, 'Sign in')
}

/** Presses a dialog's button and waits for the dialog to close. */
export async function confirmDialog(page: Page, button: string): Promise<void> {
  const dialog = page.getByRole('dialog')
  await dialog.getByRole('button', { name: button }).click()
  await dialog.waitFor({ state: 'hidden' })
}

/** Makes a status on the New status screen; answers its id (from the screen's address). */
export async function newStatus(
  page: Page,
  fields: { name: string; value?: string; key?: string; public?: boolean },
): Promise<string> {
  await goTo(page, 'Board')
  await page
    .getByRole('link', { name: /^(Create a status|New status)$/ })
    .first()
    .click()
  await onScreen(page, 'New status')
  await page.getByLabel('Name').fill(fields.name)
  if (fields.key) await page.getByLabel('Key').fill(fields.key)
  if (fields.value) await page.getByLabel('Value', { exact: true }).fill(fields.value)
  if (fields.public !== undefined)
    await page
      .getByRole('group', { name: 'Who may see it' })
      .getByRole('radio', { name: fields.public ? /Public/ : /Private/ })
      .check()
  await page.getByRole('button', { name: 'Create status' }).click()
  await onScreen(page, fields.name)
  return new URL(page.url()).pathname.split('/')[2] as string
}

/** Whether the page has nothing wider than the screen (no sideways scrolling on a phone). */
export const fitsTheScreen = (page: Page): Promise<boolean> =>
  page.evaluate('document.documentElement.scrollWidth <= innerWidth') as Promise<boolean>

/**
 * The person's device as a passkey provider: Chromium's virtual authenticator on the page's
 * profile (CTAP2, keeps discoverable credentials, verifies the user, always accepts).
 * note: WebAuthn answers only the focused page (NotAllowedError otherwise), and a journey
 * holds several: bring the page to the front before each passkey button.
 */
export async function holdPasskeys(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
}

/** Opens one of the status screen's tabs (Overview, People, Share, Notifications…). */
export async function openTab(page: Page, label: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Status' }).getByRole('link', { name: label }).click()
  await page.getByRole('region', { name: label }).waitFor()
}
