import { spawnSync } from 'node:child_process'
import type { Lifetime } from './cleanup.ts'
import { runToEnd } from './processes.ts'

// A network namespace of one's own, with only a loopback interface (`unshare -rn`: an
// unprivileged user namespace): a test that hands the outbound guard an address beyond
// loopback runs its code in one, so that a guard that fails sends nothing off the machine.

/** Why no such namespace can be made here (user namespaces not allowed), or null when one can. */
export function networkNamespaceUnavailable(): string | null {
  const probe = spawnSync('unshare', ['-rn', 'true'], { stdio: 'ignore' })
  if (probe.error) return `unshare cannot run: ${probe.error.message}`
  return probe.status === 0 ? null : `unshare -rn exits ${probe.status}: no user namespaces here`
}

/**
 * Runs an ES module's source with this Node.js in a namespace with only `lo`, and answers what
 * it printed last on stdout, parsed as JSON. The script also learns the interfaces it sees, as
 * `interfaces` in the answer, so that the test can prove where it ran.
 */
export async function runWithoutNetwork(t: Lifetime, source: string): Promise<unknown> {
  const wrapped = `
import { readFileSync } from 'node:fs'
const interfaces = readFileSync('/proc/net/dev', 'utf8').split('\\n').slice(2)
  .map((line) => line.split(':')[0].trim()).filter(Boolean)
const result = await (async () => { ${source} })()
console.log(JSON.stringify({ interfaces, result }))
`
  const run = await runToEnd(
    t,
    'unshare',
    ['-rn', process.execPath, '--input-type=module', '-e', wrapped],
    process.env,
  )
  if (run.code !== 0) throw new Error(`the script failed (${run.code}): ${run.stderr}`)
  const last = run.stdout.trim().split('\n').at(-1) ?? ''
  return JSON.parse(last)
}
