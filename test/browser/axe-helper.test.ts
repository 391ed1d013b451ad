import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing, launchChromium } from '../helpers/browser.ts'

// The helper every page's accessibility test uses: it must pass a clean page and fail a broken
// one with a message naming the rule, its impact and the element.
describe('expectNoAxeViolations', { skip: chromiumMissing(), timeout: 60_000 }, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })

  it('passes a page with a language, a title, a main landmark and labelled controls', async () => {
    const page = await browser.context.newPage()
    await page.setContent(
      '<!doctype html><html lang="en"><head><title>Clean</title></head><body><main><h1>Clean</h1>' +
        '<label>Name <input name="n"></label></main></body></html>',
    )
    await expectNoAxeViolations(page, 'a clean page')
    await page.close()
  })

  it('fails a page with an unlabelled input and low contrast, naming rule, impact and target', async () => {
    const page = await browser.context.newPage()
    await page.setContent(
      '<!doctype html><html lang="en"><head><title>Broken</title></head><body><main><h1>Broken</h1>' +
        '<input id="nameless"><p id="faint" style="color:#bbb;background:#fff">faint text</p></main></body></html>',
    )
    await assert.rejects(expectNoAxeViolations(page, 'a broken page'), (err: Error) => {
      assert.match(err.message, /on a broken page/)
      assert.match(err.message, /\[critical\] label: /)
      assert.match(err.message, /#nameless/)
      assert.match(err.message, /\[serious\] color-contrast: /)
      assert.match(err.message, /#faint/)
      return true
    })
    await page.close()
  })
})
