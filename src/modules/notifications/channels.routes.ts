import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import {
  ChannelIdParamsSchema,
  ChannelSchema,
  CreateChannelBodySchema,
  DeliveryAttemptSchema,
  NewChannelSchema,
  TestEventSchema,
  UpdateChannelBodySchema,
} from './channels.schemas.ts'
import {
  type ChannelDeps,
  channelDeliveries,
  channelOf,
  channelsOf,
  createChannel,
  deleteChannel,
  testChannel,
  updateChannel,
} from './channels.service.ts'

const tags = ['notifications']
// your own channels: an API key needs the `account` scope (docs/accounts.md#scoped-keys)
const config = { scope: 'account' } as const

/** A user's notification channels (docs/api.md#channels). */
export const channelRoutes: FastifyPluginAsyncTypebox<{ deps: ChannelDeps }> = async (
  app,
  { deps },
) => {
  app.get(
    '/v1/user/channels',
    {
      config,
      schema: {
        operationId: 'listMyChannels',
        summary: 'List your notification channels',
        description: 'Oldest first. A signing secret is never shown here.',
        tags,
        response: { 200: Type.Array(ChannelSchema), ...ERROR_RESPONSES },
      },
    },
    (request) => channelsOf(deps, request.caller.userId),
  )

  app.post(
    '/v1/user/channels',
    {
      config: { ...config, located: true, provenEmail: true },
      schema: {
        operationId: 'createChannel',
        summary: 'Create a notification channel',
        description:
          'A `webhook` channel (`config: {url, format}`) can be used at once; a `standard` one has a signing secret, in this answer only. `gotify`, `pushover`, `telegram`, `matrix` and `ntfy` channels (docs/notifications.md#services) can be used at once too; their tokens are stored but never shown, not even here. At most 20 channels per user (409 conflict).',
        tags,
        body: CreateChannelBodySchema(deps.types),
        response: { 201: NewChannelSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      // note: the body matched one variant of the registry's union (its type's config schema)
      const body = request.body as { type: string; name?: string; config: unknown }
      const channel = await createChannel(deps, request.caller.userId, body)
      return reply.code(201).header('location', `/v1/user/channels/${channel.id}`).send(channel)
    },
  )

  app.get(
    '/v1/user/channels/:id',
    {
      config,
      schema: {
        operationId: 'getChannel',
        summary: 'One of your notification channels',
        tags,
        params: ChannelIdParamsSchema,
        response: { 200: ChannelSchema, ...ERROR_RESPONSES },
      },
    },
    (request) => channelOf(deps, request.caller.userId, request.params.id),
  )

  app.patch(
    '/v1/user/channels/:id',
    {
      config,
      schema: {
        operationId: 'updateChannel',
        summary: 'Rename, disable or enable a notification channel',
        description:
          'Enabling a channel the service disabled (after 24 h of failed deliveries) clears `disabledReason` and `failingSince`.',
        tags,
        params: ChannelIdParamsSchema,
        body: UpdateChannelBodySchema,
        response: { 200: ChannelSchema, ...ERROR_RESPONSES },
      },
    },
    (request) => updateChannel(deps, request.caller.userId, request.params.id, request.body),
  )

  app.delete(
    '/v1/user/channels/:id',
    {
      config,
      schema: {
        operationId: 'deleteChannel',
        summary: 'Delete a notification channel, its pending deliveries and its delivery log',
        tags,
        params: ChannelIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await deleteChannel(deps, request.caller.userId, request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/v1/user/channels/:id/test',
    {
      config,
      schema: {
        operationId: 'testChannel',
        summary: 'Send a test event to a notification channel',
        description:
          'Records a `channel.test` event for this channel; the delivery worker sends it like any other event, within seconds. The answer names the event; its attempts show in the delivery log. A disabled channel can be tested; an unconfirmed one cannot (409).',
        tags,
        params: ChannelIdParamsSchema,
        response: { 202: TestEventSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await testChannel(deps, request.caller.userId, request.params.id)),
  )

  app.get(
    '/v1/user/channels/:id/deliveries',
    {
      config,
      schema: {
        operationId: 'listChannelDeliveries',
        summary: 'The last 100 delivery attempts to a notification channel, newest first',
        tags,
        params: ChannelIdParamsSchema,
        response: { 200: Type.Array(DeliveryAttemptSchema), ...ERROR_RESPONSES },
      },
    },
    (request) => channelDeliveries(deps, request.caller.userId, request.params.id),
  )
}
