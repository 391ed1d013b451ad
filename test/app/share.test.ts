import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { asSession } from '../helpers/accounts.ts'
import {
  type AppServer,
  appServer,
  expectScreen,
  openApp,
  type Person,
  signUpPerson,
} from '../helpers/app-browser.ts'
import { makeStatus } from '../helpers/app-statuses.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'

// The share tab (docs/app.md#sharing-a-status): who may see a status, its link, QR code and
// badge, and private links made, opened signed out and revoked, in real Chromium.

async function readStatus(server: AppServer, person: Person, id: string) {
  const res = await asSession(server.t, person.cookie, 'GET', `/v1/status/${id}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/** Lets the page use the clipboard (a person's click grants it in a real browser). */
async function allowClipboard(page: Page, origin: string): Promise<void> {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
}
const clipboard = (page: Page): Promise<string> => page.evaluate('navigator.clipboard.readText()')

describe('the share tab', { skip: chromiumMissing(), timeout: 600_000 }, () => {
  it('a private link made here opens signed out; revoked here, its open page ends at once', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server, { name: 'Olivia' })
    const status = await makeStatus(server, owner, 'room-4', {
      name: 'Meeting room 4',
      value: 'OCCUPIED',
      accessType: 'private',
    })
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${status.id}/share`,
    })
    await allowClipboard(page, server.origin)
    await expectScreen(page, 'Meeting room 4')
    await page.getByRole('button', { name: 'Make a private link' }).click()
    const field = page.getByRole('textbox', { name: 'Private link' })
    await field.waitFor()
    const url = await field.inputValue()
    assert.match(url, new RegExp(`^${server.origin}/l/sdp_`))
    await page.getByRole('button', { name: 'Copy private link' }).click()
    await page.getByText('Copied', { exact: true }).waitFor()
    assert.equal(await clipboard(page), url)
    // listed without its token
    await page.getByRole('cell', { name: 'Works' }).waitFor()
    assert.ok(!(await page.locator('table').textContent())?.includes('sdp_'))

    // a stranger's browser, signed out, sees the private status through the link, live
    const stranger = await openApp(ctx, server, { path: new URL(url).pathname })
    await stranger.page.getByText('OCCUPIED').first().waitFor()
    await stranger.page.locator('#live[data-state="live"]').waitFor()

    // the owner closes the one-time view and revokes the link, after confirming
    await page.getByRole('button', { name: 'Done' }).click()
    assert.equal(await page.getByRole('textbox', { name: 'Private link' }).count(), 0)
    await page.getByRole('button', { name: /^Revoke the link made/ }).click()
    const dialog = page.getByRole('dialog', { name: 'Revoke this private link?' })
    await dialog.waitFor()
    await dialog.getByRole('button', { name: 'Revoke link' }).click()
    await page.getByRole('cell', { name: 'Revoked' }).waitFor()

    // the open page ends without a reload, and a reload gets the "link not valid" page
    await stranger.page.getByText('This link no longer works').waitFor()
    const reloaded = await stranger.page.reload()
    assert.equal(reloaded?.status(), 404)
    const links = (
      await asSession(server.t, owner.cookie, 'GET', `/v1/status/${status.id}/share-links`)
    ).json()
    assert.equal(links.length, 1)
    assert.equal(links[0].active, false)
  })

  it('public and private, and who sees history and people, are set here', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server)
    const status = await makeStatus(server, owner, 'desk', {
      name: 'Desk',
      value: 'IN',
      accessType: 'public',
    })
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${status.id}/share`,
    })
    await expectScreen(page, 'Desk')
    assert.equal((await readStatus(server, owner, status.id)).accessType, 'public')
    await page.getByRole('radio', { name: /^Private/ }).check()
    await page.getByText('The status is private.').waitFor({ state: 'attached' })
    assert.equal((await readStatus(server, owner, status.id)).accessType, 'private')
    await page.getByRole('radio', { name: /^Public/ }).check()
    await page.getByText('The status is public.').waitFor({ state: 'attached' })
    assert.equal((await readStatus(server, owner, status.id)).accessType, 'public')
    // the free plan keeps the access settings to pro: the API's own message, inline
    await page.getByLabel('Who sees its history').selectOption('owner')
    await page.getByRole('alert').filter({ hasText: /plan/i }).waitFor()
    assert.equal((await readStatus(server, owner, status.id)).accessTypeHistory, 'private')
  })

  it('the badge preview follows the status: none is asked for while private, made public it shows the value, without a reload', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server)
    const status = await makeStatus(server, owner, 'room', { name: 'Room', value: 'FREE' })
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${status.id}/share`,
      viewport: { width: 390, height: 844 },
    })
    // a private status's badge answers 404, which a browser logs as a failed request: the
    // tab must not ask for it
    const badgeAnswers: number[] = []
    page.on('response', (response) => {
      if (new URL(response.url()).pathname.endsWith('/badge.svg'))
        badgeAnswers.push(response.status())
    })
    await expectScreen(page, 'Room')
    const sentence = page.getByText('No preview while the status is private')
    await sentence.waitFor()
    assert.equal(await page.locator('.badge-preview img').count(), 0)
    /** The SVG the preview shows now: its image loaded, read again from its address. */
    const shown = async (before: string | null) => {
      // note: a function, not a string: polling a string predicate is an eval, which the
      // app's CSP (rightly) refuses
      await page.waitForFunction((old) => {
        const img = (
          globalThis as unknown as {
            document: {
              querySelector(s: string): {
                complete: boolean
                naturalWidth: number
                currentSrc: string
              } | null
            }
          }
        ).document.querySelector('.badge-preview img')
        return Boolean(img?.complete && img.naturalWidth > 0 && img.currentSrc !== old)
      }, before)
      const src = await page
        .locator('.badge-preview img')
        .evaluate((img) => (img as unknown as { currentSrc: string }).currentSrc)
      return { src, svg: await (await fetch(src)).text() }
    }
    await page.getByRole('radio', { name: /^Public/ }).check()
    await page.getByText('The status is public.').waitFor({ state: 'attached' })
    const publicly = await shown(null)
    assert.match(publicly.svg, /FREE/)
    assert.doesNotMatch(publicly.svg, /not found/)
    // the copied snippets name the badge itself, without the preview's parameter
    assert.equal(
      await page.getByRole('textbox', { name: 'Markdown' }).inputValue(),
      `[![Room](${server.origin}/s/${status.shareId}/badge.svg)](${server.origin}/s/${status.shareId})`,
    )
    await page.getByRole('radio', { name: /^Private/ }).check()
    await page.getByText('The status is private.').waitFor({ state: 'attached' })
    await sentence.waitFor()
    assert.equal(await page.locator('.badge-preview img').count(), 0)
    assert.ok(
      badgeAnswers.every((code) => code === 200),
      `only the public badge was asked for: ${badgeAnswers.join(', ')}`,
    )
  })

  it('the share link copies, its QR code comes in a chunk of its own, the badge previews and copies', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server)
    const status = await makeStatus(server, owner, 'build', {
      name: 'Build',
      value: 'PASSING',
      accessType: 'public',
    })
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${status.id}/share`,
    })
    await allowClipboard(page, server.origin)
    await expectScreen(page, 'Build')
    const shareUrl = `${server.origin}/s/${status.shareId}`
    assert.equal(await page.getByRole('textbox', { name: 'Share link' }).inputValue(), shareUrl)
    await page.getByRole('button', { name: 'Copy link' }).click()
    await page.getByText('Copied', { exact: true }).waitFor()
    assert.equal(await clipboard(page), shareUrl)

    const scripts: string[] = []
    page.on('request', (r) => {
      if (r.resourceType() === 'script') scripts.push(r.url())
    })
    await page.getByRole('button', { name: 'Show QR code' }).click()
    const qr = page.getByRole('img', { name: `QR code for ${shareUrl}` })
    await qr.waitFor()
    assert.match((await qr.getAttribute('src')) ?? '', /^data:image\/png;base64,/)
    assert.equal(scripts.length, 1, `the QR code's library loaded on demand: ${scripts}`)
    const chunk = await (await fetch(scripts[0] as string)).text()
    assert.match(chunk, /toDataURL|QR/i)

    const badgeUrl = `${shareUrl}/badge.svg`
    const markdown = await page.getByRole('textbox', { name: 'Markdown' }).inputValue()
    assert.equal(markdown, `[![Build](${badgeUrl})](${shareUrl})`)
    const html = await page.getByRole('textbox', { name: 'HTML' }).inputValue()
    assert.equal(html, `<a href="${shareUrl}"><img src="${badgeUrl}" alt="Build"></a>`)
    const preview = page.getByRole('img', { name: 'Badge preview: Build' })
    await preview.waitFor()
    await page.waitForFunction("document.querySelector('.badge-preview img')?.naturalWidth > 0")
    await page.getByRole('button', { name: 'Copy Markdown' }).click()
    assert.equal(await clipboard(page), markdown)
    await page.getByRole('button', { name: 'Copy HTML' }).click()
    assert.equal(await clipboard(page), html)
  })

  it('a hostile status name is text everywhere on the tab, escaped in the HTML snippet', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server)
    const name = '<img src=x onerror=alert(1)>\u202eמצב\u200b]]'
    const status = await makeStatus(server, owner, 'evil', { name, value: 'X' })
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${status.id}/share`,
      viewport: { width: 375, height: 800 },
    })
    const dialogs: string[] = []
    page.on('dialog', (d) => {
      dialogs.push(d.message())
      d.dismiss()
    })
    await expectScreen(page, 'מצב')
    assert.equal(await page.locator('main h1').textContent(), name)
    assert.equal(await page.locator('main img[src="x"]').count(), 0)
    const html = await page.getByRole('textbox', { name: 'HTML' }).inputValue()
    assert.ok(html.includes('alt="&lt;img src=x onerror=alert(1)&gt;'), html)
    const markdown = await page.getByRole('textbox', { name: 'Markdown' }).inputValue()
    assert.ok(markdown.startsWith('[![<img src=x onerror=alert(1)>\u202eמצב\u200b\\]\\]]('))
    assert.ok(
      await page.evaluate('document.documentElement.scrollWidth <= innerWidth'),
      'no horizontal scrollbar at 375 px',
    )
    assert.deepEqual(dialogs, [])
  })

  for (const colorScheme of ['light', 'dark'] as const)
    for (const width of [375, 1280])
      it(`the share and people tabs pass axe (${colorScheme}, ${width} px)`, async (ctx) => {
        const server = await appServer(ctx)
        const owner = await signUpPerson(server, { name: 'Olivia' })
        const sam = await signUpPerson(server, { name: 'Sam' })
        const status = await makeStatus(server, owner, 'room', { name: 'Room', value: 'FREE' })
        // someone with a role, and an open invitation link, so every part of the tabs shows
        const offered = await asSession(
          server.t,
          owner.cookie,
          'PUT',
          `/v1/status/${status.id}/users/${sam.id}`,
          { role: 'subscriber' },
        )
        const accepted = await asSession(
          server.t,
          sam.cookie,
          'POST',
          `/v1/user/invitations/${offered.json().id}/accept`,
        )
        assert.equal(accepted.statusCode, 200, accepted.body)
        const link = await asSession(
          server.t,
          owner.cookie,
          'POST',
          `/v1/status/${status.id}/invitations`,
          { role: 'updater' },
        )
        assert.equal(link.statusCode, 201, link.body)
        const { page } = await openApp(ctx, server, {
          person: owner,
          path: `/statuses/${status.id}/share`,
          viewport: { width, height: 800 },
          colorScheme,
        })
        await expectScreen(page, 'Room')
        await page.getByRole('button', { name: 'Make a private link' }).click()
        await page.getByRole('textbox', { name: 'Private link' }).waitFor()
        await page.getByRole('button', { name: 'Show QR code' }).click()
        await page.getByRole('img', { name: /^QR code for/ }).waitFor()
        await expectNoAxeViolations(page, `share tab, ${colorScheme}, ${width} px`)
        await page.getByRole('button', { name: /^Revoke the link made/ }).click()
        await page.getByRole('dialog').waitFor()
        await expectNoAxeViolations(page, `share tab's dialog, ${colorScheme}, ${width} px`)
        await page.keyboard.press('Escape')
        await page.getByRole('link', { name: 'People' }).click()
        await page.getByText('Sam', { exact: true }).waitFor()
        await page.getByText(/Updater link/).waitFor()
        await expectNoAxeViolations(page, `people tab, ${colorScheme}, ${width} px`)
      })
})
