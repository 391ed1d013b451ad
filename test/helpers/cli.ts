import assert from 'node:assert/strict'
import { main } from '../../src/cli/main.ts'

export interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Runs `statusd …` in-process, exactly as bin/statusd.js does; captures both outputs. */
export async function run(...argv: string[]): Promise<Run> {
  let stdout = ''
  let stderr = ''
  const code = await main(
    argv,
    (t) => {
      stdout += t
    },
    (t) => {
      stderr += t
    },
  )
  return { code, stdout, stderr }
}

/** Runs a command with --json that must succeed and write nothing to stderr; its parsed output. */
// biome-ignore lint/suspicious/noExplicitAny: parsed CLI output, every use is checked by an assertion
export async function json(...argv: string[]): Promise<any> {
  const r = await run(...argv, '--json')
  assert.equal(r.code, 0, `statusd ${argv.join(' ')} failed: ${r.stderr}`)
  assert.equal(r.stderr, '', 'a successful command writes nothing to stderr')
  return JSON.parse(r.stdout)
}
