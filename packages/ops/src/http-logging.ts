import {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { requestIdOf, requestSummary } from '@sluice/core';

/**
 * One line a request, `request completed` (or `request errored`) with the request's id, its
 * method, path and peer (never headers or query), the status and the milliseconds; Fastify's
 * `incoming request` line is dropped. Its other lines (route not found, stream errors) stay.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { req: request, res: { statusCode: reply.statusCode }, ms: Math.round(reply.elapsedTime) };
    if (error) request.log.error({ ...line, err: error }, 'request errored');
    else request.log.info(line, 'request completed');
  }
}

/**
 * Fastify's logging options for the admin app and the API: requests logged through `logger` (a
 * child whose `req` shows method, path and peer), one line each; ids from a valid
 * `x-request-id` or new. Pair with {@link answerRequestIds}.
 */
export function httpLogging(logger: FastifyBaseLogger | undefined) {
  return {
    ...(logger ? { loggerInstance: logger.child({}, { serializers: { req: requestSummary } }) } : {}),
    logController: new OneLinePerRequest(),
    requestIdHeader: false as const,
    genReqId: (req: { headers: Record<string, unknown> }) => requestIdOf(req.headers['x-request-id']),
  };
}

/** Answers each request's id in `x-request-id`, so a caller can find its line in the logs. */
export function answerRequestIds(server: FastifyInstance): void {
  server.addHook('onRequest', async (req, reply) => {
    void reply.header('x-request-id', req.id);
  });
}
