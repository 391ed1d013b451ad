import type { FastifyInstance } from 'fastify'
import { BoardStreams } from './board-streams.ts'
import { boardRoutes, publicBoardRoutes } from './boards.routes.ts'

/**
 * Boards (docs/app.md#boards-and-the-wall): a user's boards, and a public board's JSON and
 * its one live stream. Needs the live updates and the statuses.
 */
export async function boards(app: FastifyInstance): Promise<void> {
  const boardStreams = new BoardStreams()
  app.keyedRoutes(boardRoutes, { deps: app.services, publicUrl: app.publicUrl, boardStreams })
  await app.register(publicBoardRoutes, {
    deps: app.services,
    feeds: app.feeds,
    sse: app.sseOptions,
    quota: app.streamQuota,
    boardStreams,
  })
}
