import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { describe, it } from 'node:test'
import { createMailer, MailError, sendInBackground } from '../../src/lib/mailer.ts'
import { startSmtpServer } from '../helpers/smtp.ts'

// The mailer (docs/operations.md#e-mail): messages go through a real SMTP server; a failure
// never shows the SMTP password, in the error or in the log.

const PASSWORD = 'pa$$ w0rd/with:odd@chars'
const credentials = `mailer:${encodeURIComponent(PASSWORD)}`

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('mailer', () => {
  it('sends through the SMTP server: from MAIL_FROM, to, subject and text arrive', async (t) => {
    const smtp = await startSmtpServer(t, { credentials })
    const mailer = createMailer(smtp.url, 'statusd <noreply@status.example.com>')
    await mailer.send({
      to: 'ann@example.com',
      subject: 'Hello Zoë 🟢',
      text: 'Line one\nLine two',
    })
    const mail = await smtp.next()
    assert.deepEqual(mail.from?.value, [{ name: 'statusd', address: 'noreply@status.example.com' }])
    assert.equal(mail.subject, 'Hello Zoë 🟢')
    assert.equal(mail.text?.trim(), 'Line one\nLine two')
    assert.deepEqual(smtp.logins(), [{ username: 'mailer', password: PASSWORD }])
  })

  it('next() waits for a message that has not arrived yet, and takes each once', async (t) => {
    const smtp = await startSmtpServer(t)
    const mailer = createMailer(smtp.url, 'statusd <a@example.com>')
    const first = smtp.next()
    const second = smtp.next()
    await mailer.send({ to: 'x@example.com', subject: 'one', text: '1' })
    await mailer.send({ to: 'x@example.com', subject: 'two', text: '2' })
    assert.equal((await first).subject, 'one')
    assert.equal((await second).subject, 'two')
    assert.equal(smtp.messages().length, 2)
  })

  it('a login the server refuses fails the send with a MailError that holds no password', async (t) => {
    const smtp = await startSmtpServer(t, { credentials, refuseLogin: true })
    const mailer = createMailer(smtp.url, 'statusd <a@example.com>')
    const err = await mailer.send({ to: 'x@example.com', subject: 's', text: 't' }).then(
      () => assert.fail('the send must fail'),
      (e: unknown) => e,
    )
    assert.ok(err instanceof MailError)
    assert.equal(err.code, 'EAUTH')
    assert.equal(err.responseCode, 535)
    assert.match(err.message, /^could not send e-mail through smtp:\/\/127\.0\.0\.1:\d+: /)
    const everything = JSON.stringify({ ...err, message: err.message, stack: err.stack })
    for (const secret of [PASSWORD, encodeURIComponent(PASSWORD), credentials])
      assert.ok(!everything.includes(secret), `"${secret}" must not appear in ${everything}`)
    assert.equal(smtp.messages().length, 0)
  })

  it('a server that is not there fails the send (ECONNECTION), never hangs it', async () => {
    const url = `smtp://${credentials}@127.0.0.1:${await closedPort()}`
    const mailer = createMailer(url, 'statusd <a@example.com>')
    await assert.rejects(
      mailer.send({ to: 'x@example.com', subject: 's', text: 't' }),
      (err: MailError) => {
        assert.ok(err instanceof MailError)
        assert.ok(!err.message.includes(encodeURIComponent(PASSWORD)))
        assert.ok(!err.message.includes(PASSWORD))
        return true
      },
    )
  })

  it('sendInBackground logs a failure with the address of the server, not its password', async (t) => {
    const smtp = await startSmtpServer(t, { credentials, refuseLogin: true })
    const lines: string[] = []
    const log = {
      warn: (obj: object, message: string) => lines.push(JSON.stringify({ obj, message })),
    }
    const sent = await sendInBackground(
      createMailer(smtp.url, 'statusd <a@example.com>'),
      { to: 'x@example.com', subject: 's', text: 'secret link sdl_xyz' },
      log,
      'password reset',
    )
    assert.equal(sent, false)
    assert.equal(lines.length, 1)
    assert.match(lines[0] as string, /e-mail not sent \(password reset\)/)
    assert.match(lines[0] as string, /535/)
    for (const secret of [PASSWORD, encodeURIComponent(PASSWORD), 'sdl_xyz'])
      assert.ok(!(lines[0] as string).includes(secret), lines[0])
  })
})
