// A node:test reporter that adds up the responses test/helpers/contract.ts checked against
// the OpenAPI document, from the line each test file reports (`contract: <n> responses …`),
// and writes `<responses> <files>`. `scripts/test.ts` prints the sum at the end of a run
// (docs/architecture.md#tests).
import type { TestEvent } from 'node:test/reporters'

const LINE = /^contract: (\d+) responses checked/

export default async function* contract(source: AsyncIterable<TestEvent>) {
  let responses = 0
  let files = 0
  for await (const event of source) {
    if (event.type !== 'test:diagnostic') continue
    const found = LINE.exec(event.data.message)
    if (!found) continue
    responses += Number(found[1])
    files += 1
  }
  yield `${responses} ${files}\n`
}
