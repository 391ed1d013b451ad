import { type Static, Type } from 'typebox'
import type { FieldError } from '../../lib/errors.ts'
import type { OutboundClient } from '../../lib/outbound.ts'
import { withPatternMessage } from '../../lib/schema.ts'
import type {
  ChannelRow,
  ChannelTypeDefinition,
  NotificationEvent,
  SendContext,
} from './channel-types.ts'
import { notificationText, oneLine } from './notification-message.ts'
import {
  Credential,
  endpointUrl,
  JSON_HEADERS,
  ServerUrl,
  sendToService,
  serverReachProblem,
  serverUrlProblem,
} from './service-channel.ts'

// The `matrix` channel type (docs/notifications.md#matrix): each event is an `m.text`
// message sent to a room through the client-server API, as the user whose access token the
// channel holds.

export const MatrixConfigSchema = Type.Object(
  {
    homeserver: ServerUrl("The homeserver's client API address (`https://matrix.example.org`)"),
    roomId: withPatternMessage(
      Type.String({
        pattern: '^![^:\\s]+:[^\\s]+$',
        maxLength: 255,
        description: 'The room\u2019s id (`!abcdefg:example.org`; Room settings → Advanced)',
      }),
      'must be a room id: !, an opaque part, a colon and the server (!abc:example.org)',
    ),
    accessToken: Credential('An access token of the account that posts (a bot account)'),
  },
  { additionalProperties: false },
)
export type MatrixConfig = Static<typeof MatrixConfigSchema>

/**
 * What to PUT for one event:
 * `PUT /_matrix/client/v3/rooms/{roomId}/send/m.room.message/{txnId}`. The transaction id is
 * the channel's and the event's, the same on every attempt: the homeserver makes a retried
 * request one message.
 */
export function matrixRequest(
  channel: Pick<ChannelRow, 'id'>,
  config: MatrixConfig,
  event: NotificationEvent,
  context: SendContext,
) {
  const text = notificationText(event, context)
  const txnId = encodeURIComponent(`statusd.${channel.id}.${event.id}`)
  const room = encodeURIComponent(config.roomId)
  return {
    url: endpointUrl(
      config.homeserver,
      `_matrix/client/v3/rooms/${room}/send/m.room.message/${txnId}`,
    ),
    headers: { ...JSON_HEADERS, authorization: `Bearer ${config.accessToken}` },
    body: JSON.stringify({
      msgtype: 'm.text',
      body: `${oneLine(text.title)}\n${text.body}\n${text.url}`,
    }),
  }
}

export const matrixChannel = (outbound: OutboundClient): ChannelTypeDefinition<MatrixConfig> => ({
  type: 'matrix',
  configSchema: MatrixConfigSchema,
  verifiedOnCreate: true,
  credentials: ['accessToken'],
  configProblems(config): FieldError[] {
    const problem = serverUrlProblem('config.homeserver', config.homeserver)
    return problem ? [problem] : []
  },
  reachProblem: (config) => serverReachProblem(outbound, 'config.homeserver', config.homeserver),
  defaultName: (config) => `Matrix (${config.roomId})`,
  async send(channel, config, event, context) {
    const { url, headers, body } = matrixRequest(channel, config, event, context)
    return sendToService(outbound, url, { method: 'PUT', headers, body })
  },
})
