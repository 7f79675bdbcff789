import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { requestIdOf, requestSummary } from '@sluice/core';

/**
 * Fastify's logging options: requests logged through `logger` (a child whose `req` shows
 * method, path and peer, never headers or query), ids from a valid `x-request-id` or new.
 * Fastify's own two lines a request are off: {@link logRequests} writes one.
 */
export function httpLogging(logger: FastifyBaseLogger | undefined) {
  return {
    ...(logger ? { loggerInstance: logger.child({}, { serializers: { req: requestSummary } }) } : {}),
    disableRequestLogging: true,
    requestIdHeader: false as const,
    genReqId: (req: { headers: Record<string, unknown> }) => requestIdOf(req.headers['x-request-id']),
  };
}

/** Answers each request's id in `x-request-id`, and logs one line per request answered. */
export function logRequests(server: FastifyInstance): void {
  server.addHook('onRequest', async (req, reply) => {
    void reply.header('x-request-id', req.id);
  });
  server.addHook('onResponse', async (req, reply) => {
    req.log.info(
      { req, res: { statusCode: reply.statusCode }, ms: Math.round(reply.elapsedTime) },
      'request completed',
    );
  });
}
