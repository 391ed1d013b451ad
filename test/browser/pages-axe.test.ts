import { after, before, describe, it } from 'node:test'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing, launchChromium, listeningApp } from '../helpers/browser.ts'
import { createStatus, makeCast } from '../helpers/sharing.ts'

// The server-rendered pages (share page, private link page, invitation page, not-found and
// e-mail link pages) pass axe-core's WCAG 2.0/2.1 A+AA and 2.2 AA rules, light and dark, on a
// phone and a desktop; the share page also in its "not available right now" state.

// note: bounds for waiting, not timing assertions; a broken page fails instead of hanging
const WAIT = { timeout: 20_000 }

describe('server-rendered pages pass axe', { skip: chromiumMissing(), timeout: 600_000 }, () => {
  for (const colorScheme of ['light', 'dark'] as const) {
    let browser: Awaited<ReturnType<typeof launchChromium>>
    before(async () => {
      browser = await launchChromium({ colorScheme })
    })
    after(async () => {
      await browser?.close()
    })

    it(`${colorScheme}, at 375 and 1280 px`, async (ctx) => {
      const { t, base } = await listeningApp(ctx)
      const { owner } = await makeCast(t)
      const s = await createStatus(t, owner, 'room', {
        name: 'Meeting room 4',
        value: 'OCCUPIED',
        colorNo: 2,
        accessType: 'public',
        accessTypeHistory: 'public',
        accessTypeUserList: 'public',
        description: 'Book at https://rooms.example.com',
      })
      await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'FREE', colorNo: 3 })
      const link = (await t.request(owner, 'POST', `/v1/status/${s.id}/share-links`, {})).json()
      const invitation = await t.request(owner, 'POST', `/v1/status/${s.id}/invitations`, {
        role: 'subscriber',
      })
      const pages = {
        'share page': `/s/${s.shareId}`,
        'private link page': link.url as string,
        'invitation page': new URL(invitation.json().url).pathname,
        'not-found page': '/s/zzzzzzzz',
        'unknown verification link page': '/auth/verify/sdl_unknown',
        'unknown reset link page': '/auth/reset/sdl_unknown',
      }
      for (const width of [375, 1280])
        for (const [name, path] of Object.entries(pages)) {
          const page = await browser.context.newPage()
          await page.setViewportSize({ width, height: 800 })
          await page.goto(base + path)
          if (await page.$('#live')) await page.waitForSelector('#live[data-state="live"]', WAIT)
          await expectNoAxeViolations(page, `${name}, ${colorScheme}, ${width} px`)
          await page.close()
        }

      // the share page while its status is private: the note and the "Not available" mark
      const page = await browser.context.newPage()
      await page.setViewportSize({ width: 375, height: 800 })
      await page.goto(`${base}/s/${s.shareId}`)
      await page.waitForSelector('#live[data-state="live"]', WAIT)
      await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'private' })
      await page.waitForSelector('#live[data-state="unavailable"]', WAIT)
      await expectNoAxeViolations(page, `share page not available, ${colorScheme}, 375 px`)
      await page.close()
    })
  }
})
