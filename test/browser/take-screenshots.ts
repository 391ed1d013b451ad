// Takes the share page screenshots in docs/ (not a test): `node test/browser/take-screenshots.ts`.
// Needs /usr/bin/chromium (Debian package `chromium`).
import { fileURLToPath } from 'node:url'
import { launchChromium, listeningApp } from '../helpers/browser.ts'
import { createStatus, grant } from '../helpers/sharing.ts'

const docs = (name: string) => fileURLToPath(new URL(`../../docs/${name}`, import.meta.url))

// not a test: the app's cleanup runs at the end of the script
const cleanup: (() => unknown)[] = []
const { t, base } = await listeningApp({ after: (fn) => cleanup.push(fn) })
try {
  const owner = await t.user({ name: 'Olivia Martin', plan: 'pro' })
  const desk = await t.user({ name: 'Front desk' })
  const sam = await t.user({ name: 'Sam Lee' })
  const s = await createStatus(t, owner, 'room-4', {
    name: 'Meeting room 4',
    value: 'FREE',
    colorNo: 3,
    accessType: 'public',
    accessTypeHistory: 'public',
    accessTypeUserList: 'public',
    description:
      'Floor 2, east wing: 8 seats, screen and video bar.\nBook it at rooms.example.com or ask the front desk.',
  })
  await grant(t, owner, s.id, desk, 'updater')
  await grant(t, owner, s.id, sam, 'subscriber')
  for (const [who, value] of [
    [desk, 'OCCUPIED'],
    [desk, 'FREE'],
    [owner, 'CLEANING'],
    [desk, 'OCCUPIED'],
  ] as const)
    await t.request(who, 'PATCH', `/v1/status/${s.id}`, { value })
  await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { colorNo: 2 })

  // a believable day: the updates spread over the morning (history rows only carry times)
  const db = t.database.db
  const day = new Date()
  day.setUTCHours(0, 0, 0, 0)
  const times = ['08:02', '09:30', '10:58', '11:40', '13:15'].map(
    (hm) => `${day.toISOString().slice(0, 10)}T${hm}:00.000Z`,
  )
  for (const [i, at] of times.entries())
    await db
      .updateTable('status_history')
      .set({ at })
      .where('status_id', '=', s.id)
      .where('change_no', '=', i + 1)
      .execute()
  await db
    .updateTable('statuses')
    .set({ value_updated_at: times[4] as string })
    .where('id', '=', s.id)
    .execute()

  for (const shot of [
    { file: 'share-page.png', viewport: { width: 1100, height: 1020 }, scale: 1 },
    { file: 'share-page-phone.png', viewport: { width: 390, height: 844 }, scale: 2 },
  ]) {
    const browser = await launchChromium({ viewport: shot.viewport, deviceScaleFactor: shot.scale })
    try {
      const page = await browser.context.newPage()
      await page.goto(`${base}/s/${s.shareId}`)
      await page.waitForSelector('#live[data-state="live"]')
      await page.screenshot({ path: docs(shot.file), fullPage: true })
      process.stdout.write(`wrote docs/${shot.file}\n`)
    } finally {
      await browser.close()
    }
  }
} finally {
  for (const fn of cleanup) await fn()
}
