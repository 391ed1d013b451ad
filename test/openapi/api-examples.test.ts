import assert from 'node:assert/strict'
import { it } from 'node:test'
import { runToEnd } from '../helpers/processes.ts'

// docs/api.md#conventions: every response shown there, and every example of a named schema in
// the OpenAPI document, is what a real run of this version answers. scripts/api-examples.ts
// makes them; here it checks that they are still what a run gives.

it('docs/api.md and the OpenAPI document show the examples a run of this version records', async (t) => {
  const run = await runToEnd(t, process.execPath, ['scripts/api-examples.ts', '--check'], {
    ...process.env,
  })
  assert.equal(
    run.code,
    0,
    `${run.stderr}\nRun \`npm run docs:api-examples\` and commit what it changes.`,
  )
})
