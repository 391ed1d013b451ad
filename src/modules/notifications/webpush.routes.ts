import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import type { VapidKeys } from './vapid-keys.ts'

export interface WebpushRouteOptions {
  keys: VapidKeys
}

const WebpushKeySchema = Type.Object(
  {
    publicKey: Type.String({
      description:
        "The service's VAPID public key (uncompressed P-256, base64url): the `applicationServerKey` of `pushManager.subscribe`",
    }),
  },
  {
    examples: [
      {
        publicKey:
          'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
      },
    ],
  },
)

/** The VAPID public key browsers subscribe with (docs/api.md#web-push-key). */
export const webpushRoutes: FastifyPluginAsyncTypebox<WebpushRouteOptions> = async (
  app,
  { keys },
) => {
  app.get(
    '/v1/webpush/key',
    {
      // note: the key is no secret, but only someone who may add a channel has a use for it
      config: { scope: 'account' },
      schema: {
        operationId: 'getWebpushKey',
        summary: "The service's VAPID public key, for subscribing a browser to push",
        description:
          'Pass it to `registration.pushManager.subscribe({userVisibleOnly: true, applicationServerKey})`, then send the subscription to `POST /v1/user/channels` as `{type: "webpush", config: {subscription}}`. It stays the same for the life of the database.',
        tags: ['notifications'],
        response: { 200: WebpushKeySchema, ...ERROR_RESPONSES },
      },
    },
    async () => ({ publicKey: (await keys.get()).publicKey }),
  )
}
