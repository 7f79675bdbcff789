import type { FastifyInstance } from 'fastify';
import { SluiceError } from '@sluice/core';
import type { Idempotency } from '@sluice/store';
import { sendError } from './auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Settles the request's claimed `Idempotency-Key` with its answer (set when it has one). */
    settleIdempotency?: (status: number, body: string) => Promise<void>;
  }
}

/** The header a repeated request's replayed answer carries. */
export const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * `Idempotency-Key` on every POST of `app` (docs/design/tenants-and-keys.md), scoped to the
 * request's API key and route: the first request claims it; a repeat with the same body gets
 * the first answer again (its status and body, with `Idempotent-Replayed: true`), one with
 * another body a 422, one while the first is answered a 409 with `Retry-After`. Registered after
 * the key check: a request refused for its key claims nothing.
 */
export function useIdempotency(app: FastifyInstance, idempotency: Idempotency): void {
  app.addHook('preHandler', async (req, reply) => {
    const header = req.headers['idempotency-key'];
    if (req.method !== 'POST' || header === undefined || req.auth === undefined) return;
    if (req.routeOptions.config.streamed) return;
    try {
      const claim = await idempotency.claim(
        {
          tenantId: req.auth.tenant.id,
          keyId: req.auth.key.id,
          route: `${req.method} ${req.routeOptions.url ?? req.url}`,
          idempotencyKey: [header].flat().join(','),
        },
        req.body,
      );
      if (claim.kind === 'replay') {
        return reply.code(claim.status).header(REPLAYED_HEADER, 'true').type('application/json').send(claim.body);
      }
      req.settleIdempotency = claim.settle;
    } catch (err) {
      if (err instanceof SluiceError) return sendError(reply, err);
      throw err;
    }
  });
  // The answer as it goes out: kept for a repeat, or the key let go (a server error).
  app.addHook('onSend', async (req, reply, payload) => {
    const settle = req.settleIdempotency;
    if (settle === undefined) return payload;
    req.settleIdempotency = undefined;
    try {
      await settle(reply.statusCode, typeof payload === 'string' ? payload : JSON.stringify(payload ?? null));
    } catch (err) {
      // The answer stands; the key's claim lapses unanswered, so a repeat after it runs again.
      req.log.warn({ err, event: 'idempotency_unsettled' }, 'Idempotency-Key answer not kept (Redis)');
    }
    return payload;
  });
}
