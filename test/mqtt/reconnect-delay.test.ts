import assert from 'node:assert/strict'
import { it } from 'node:test'
import { describeMqttUrl, reconnectDelayMs } from '../../src/modules/mqtt/mqtt-bridge.ts'

// docs/integrations.md#delivery: the bridge reconnects after a growing delay, capped, with
// jitter; the broker's address is logged without its user and password.

const bounds = { minMs: 1_000, maxMs: 60_000 }

it('the delay doubles from the first, up to the cap, and never past it', () => {
  const ceilings = [0, 1, 2, 3, 4, 5, 6, 7, 40, 5_000].map((n) => reconnectDelayMs(n, bounds, 1))
  assert.deepEqual(
    ceilings,
    [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000, 60_000],
  )
})

it('jitter spreads each delay over the upper half of its ceiling', () => {
  assert.equal(reconnectDelayMs(3, bounds, 0), 4_000)
  assert.equal(reconnectDelayMs(3, bounds, 0.5), 6_000)
})

it("the broker's URL is logged without user and password", () => {
  assert.equal(describeMqttUrl('mqtts://bridge:hunter2@broker.lan:8883'), 'mqtts://broker.lan:8883')
  assert.equal(describeMqttUrl('not a url'), 'the MQTT broker')
})
