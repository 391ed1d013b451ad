import { normalizeIP } from '@fastify/rate-limit'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { StreamQuota } from '../../lib/client-limits.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import type { SseOptions } from '../../lib/sse.ts'
import {
  EVENT_STREAM_RESPONSE,
  openInPlace,
  openStream,
  takePlace,
} from '../events/event-streams.ts'
import { attachMany, manyStreamOptions } from '../events/many-statuses.ts'
import type { StatusFeeds } from '../events/status-feeds.ts'
import type { ServiceDeps } from '../service-deps.ts'
import type { BoardStreams } from './board-streams.ts'
import {
  BoardCreateSchema,
  BoardIdParamsSchema,
  BoardSchema,
  BoardShareIdParamsSchema,
  BoardUpdateSchema,
  PublicBoardSchema,
} from './boards.schemas.ts'
import {
  boardStatusIds,
  createBoard,
  deleteBoard,
  listBoards,
  ownBoard,
  publicBoard,
  publicBoardRow,
  toBoard,
  updateBoard,
} from './boards.service.ts'

const tags = ['boards']

/**
 * A user's boards (docs/api.md#boards). Reading needs `status:read`; making, changing and
 * deleting one `status:manage`, as sharing does: a public board publishes what it shows.
 */
export const boardRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  publicUrl: string | null
  boardStreams: BoardStreams
}> = async (app, { deps, publicUrl, boardStreams }) => {
  app.post(
    '/v1/boards',
    {
      config: { scope: 'status:manage', located: true },
      schema: {
        operationId: 'createBoard',
        summary: 'Make a board: a named set of statuses, shown together on a wall page',
        description:
          "Each status must be one you may see (400 validationError naming each other one). At most the plan's `maxBoards` boards (402 planLimitReached).",
        tags,
        body: BoardCreateSchema,
        response: { 201: BoardSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const row = await createBoard(deps, request.caller, request.body)
      const board = toBoard(row, publicUrl)
      return reply
        .code(201)
        .header('location', `${publicUrl ?? ''}/v1/boards/${board.id}`)
        .send(board)
    },
  )

  app.get(
    '/v1/boards',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'listBoards',
        summary: 'List your boards, oldest first',
        tags,
        response: { 200: Type.Array(BoardSchema), ...ERROR_RESPONSES },
      },
    },
    async (request) =>
      (await listBoards(deps, request.caller)).map((row) => toBoard(row, publicUrl)),
  )

  app.get(
    '/v1/boards/:boardId',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'getBoard',
        summary: 'Read one of your boards',
        tags,
        params: BoardIdParamsSchema,
        response: { 200: BoardSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) =>
      toBoard(await ownBoard(deps, request.caller, request.params.boardId), publicUrl),
  )

  app.patch(
    '/v1/boards/:boardId',
    {
      config: { scope: 'status:manage' },
      schema: {
        operationId: 'updateBoard',
        summary: 'Change one of your boards (name, statuses, access)',
        description:
          'Its open wall streams end (`event: board`), and walls reconnect to it as it now is.',
        tags,
        params: BoardIdParamsSchema,
        body: BoardUpdateSchema,
        response: { 200: BoardSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const row = await updateBoard(deps, request.caller, request.params.boardId, request.body)
      boardStreams.end(row.id, 'changed')
      return toBoard(row, publicUrl)
    },
  )

  app.delete(
    '/v1/boards/:boardId',
    {
      config: { scope: 'status:manage' },
      schema: {
        operationId: 'deleteBoard',
        summary: 'Delete one of your boards (its statuses stay)',
        tags,
        params: BoardIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await deleteBoard(deps, request.caller, request.params.boardId)
      boardStreams.end(request.params.boardId, 'deleted')
      return reply.code(204).send(null)
    },
  )
}

/**
 * What anyone sees of a public board (docs/app.md#boards-and-the-wall): its JSON and its one
 * live stream, without a key. A private or unknown board is 404.
 */
export const publicBoardRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  feeds: StatusFeeds
  sse: SseOptions
  quota: StreamQuota
  boardStreams: BoardStreams
}> = async (app, { deps, feeds, sse, quota, boardStreams }) => {
  app.get(
    '/b/:shareId/json',
    {
      config: { auth: 'none', publicView: true, anonymousLimit: true },
      schema: {
        operationId: 'getPublicBoard',
        summary: 'A public board and what it shows (no API key)',
        description:
          "Each status as its public share view, in the board's order; a status that is private (or deleted) is a tile with `status: null`: nothing of it is shown.",
        tags: ['public'],
        params: BoardShareIdParamsSchema,
        response: { 200: PublicBoardSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const board = await publicBoard(deps, request.params.shareId)
      return reply.header('cache-control', 'no-cache').send(board)
    },
  )

  app.get(
    '/b/:shareId/events',
    {
      config: { auth: 'none', publicView: true, anonymousLimit: true },
      schema: {
        operationId: 'streamPublicBoardEvents',
        summary: 'Live updates of every status on a public board, on one stream (no API key)',
        description:
          'As `GET /v1/events`, with each status\'s public share view as `status`. A status made private is announced `event: unavailable` `{"statusId", "reason": "notVisible"}` and comes back when public again, without a reconnect. A change to the board ends the stream with `event: board` `{"reason": "changed" | "deleted"}`. Counts once against `STREAMS_PER_CLIENT` of the client address.',
        tags: ['public'],
        params: BoardShareIdParamsSchema,
        response: EVENT_STREAM_RESPONSE,
      },
    },
    async (request, reply) => {
      const release = takePlace(quota, `ip ${normalizeIP(request.ip)}`)
      let boardId = ''
      let statusIds: string[] = []
      const { stream } = await openInPlace(release, async () => {
        const row = await publicBoardRow(deps, request.params.shareId)
        boardId = row.id
        statusIds = boardStatusIds(row)
        const stream = openStream(request, reply, manyStreamOptions(sse, statusIds.length), {
          'access-control-allow-origin': '*',
          'x-content-type-options': 'nosniff',
        })
        return { stream }
      })
      if (stream === null) return reply
      boardStreams.add(boardId, stream)
      await attachMany(
        feeds,
        stream,
        statusIds,
        { kind: 'share' },
        request.headers['last-event-id'],
      )
      return reply
    },
  )
}
