// Takes the app's screenshots in docs/ (not a test): `node test/browser/take-app-screenshots.ts`.
// Needs /usr/bin/chromium (Debian package `chromium`) and the built app (`npm run build`).
import { fileURLToPath } from 'node:url'
import { asSession } from '../helpers/accounts.ts'
import { appServer, openApp, signUpPerson } from '../helpers/app-browser.ts'

const docs = (name: string) => fileURLToPath(new URL(`../../docs/${name}`, import.meta.url))

// not a test: everything made here goes at the end of the script
const cleanup: (() => unknown)[] = []
const ctx = { after: (fn: () => unknown) => cleanup.push(fn) }
try {
  const server = await appServer(ctx)
  const olivia = await signUpPerson(server, { name: 'Olivia Martin', email: 'olivia@example.com' })
  const as = (method: 'POST' | 'PATCH', url: string, body: unknown) =>
    asSession(server.t, olivia.cookie, method, url, body)
  const rooms = [
    ['room-1', 'Room 1', 'FREE'],
    ['room-2', 'Room 2', 'OCCUPIED'],
    ['room-3', 'Room 3', 'FREE'],
    ['room-4', 'Meeting room 4', 'CLEANING'],
    ['lab', 'Print lab', 'OPEN'],
    ['deploy', 'Deploy main', 'PASSING'],
  ] as const
  const palette = [
    { value: 'FREE', colorNo: 3 },
    { value: 'OCCUPIED', colorNo: 2 },
    { value: 'CLEANING', colorNo: 4 },
  ]
  const ids: string[] = []
  for (const [key, name, value] of rooms) {
    const res = await as('POST', `/v1/status-keys/${key}`, {
      name,
      accessType: 'public',
      palette: key.startsWith('room') ? palette : [],
    })
    if (res.statusCode !== 201) throw new Error(`create ${key}: ${res.statusCode} ${res.body}`)
    const { id } = res.json()
    ids.push(id)
    for (const v of key.startsWith('room') ? ['OCCUPIED', 'FREE', value] : [value])
      await as('PATCH', `/v1/status/${id}`, { value: v })
  }
  // a believable morning: the changes spread over hours (history rows only carry times)
  const db = server.t.database.db
  const hour = 3_600_000
  for (const [i, id] of ids.entries()) {
    const rows = await db
      .selectFrom('status_history')
      .select('change_no')
      .where('status_id', '=', id)
      .execute()
    let last = ''
    for (const { change_no } of rows) {
      last = new Date(
        Date.now() - (rows.length - change_no + 1) * 1.5 * hour - i * 7 * 60_000,
      ).toISOString()
      await db
        .updateTable('status_history')
        .set({ at: last })
        .where('status_id', '=', id)
        .where('change_no', '=', change_no)
        .execute()
    }
    await db.updateTable('statuses').set({ value_updated_at: last }).where('id', '=', id).execute()
  }
  const board = (
    await as('POST', '/v1/boards', {
      name: 'Second floor',
      statusIds: ids.slice(0, 4),
      accessType: 'public',
    })
  ).json()

  const shots = [
    {
      file: 'app-board.png',
      path: '/',
      ready: '.board-tile',
      viewport: { width: 1200, height: 760 },
    },
    {
      file: 'app-status.png',
      path: `/statuses/${ids[3]}/history`,
      ready: 'canvas',
      viewport: { width: 1200, height: 900 },
    },
    {
      file: 'wall.png',
      path: `/b/${board.shareId}`,
      ready: '[data-status-id]',
      viewport: { width: 1280, height: 720 },
    },
  ]
  for (const shot of shots) {
    const { page } = await openApp(ctx, server, {
      person: olivia,
      path: shot.path,
      viewport: shot.viewport,
    })
    await page.locator(shot.ready).first().waitFor()
    await page.waitForTimeout(500) // fonts and the chart settle
    await page.screenshot({ path: docs(shot.file) })
    process.stdout.write(`wrote docs/${shot.file}\n`)
  }
} finally {
  for (const fn of cleanup.reverse()) await fn()
}
