import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SluiceError, type SluiceErrorCode } from '@sluice/core';
import { requireScope, type Authenticated, type Authenticator, type KeyScope } from '@sluice/store';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a `/v1` route needs; a route without one is refused at registration. */
    scope?: KeyScope;
    /**
     * The body is read as a stream by the handler (NDJSON): no `Idempotency-Key` fingerprint, as
     * the route is idempotent by its cursor (a line sent again is skipped).
     */
    streamed?: true;
  }
  interface FastifyRequest {
    /** The request's key, checked (set on every `/v1` route before its handler). */
    auth?: Authenticated;
  }
}

/** The HTTP status of each error code an ingest route answers with. */
const STATUS: Partial<Record<SluiceErrorCode, number>> = {
  key_missing: 401,
  key_malformed: 401,
  key_invalid: 401,
  key_revoked: 401,
  key_expired: 401,
  key_scope: 403,
  key_source: 403,
  tenant_disabled: 403,
  key_disabled: 403,
  keys_unconfigured: 503,
  redis_unavailable: 503,
  no_fleet: 503,
  fleet_incompatible: 503,
  invalid_message: 400,
  invalid_argument: 400,
  unknown_campaign: 404,
  campaign_cancelled: 409,
  campaign_archived: 409,
  campaign_exists: 409,
  campaign_launched: 409,
  no_scheduler: 503,
  storage_full: 503,
  idempotency_key_invalid: 400,
  idempotency_key_reused: 422,
  idempotency_in_flight: 409,
  invalid_recipient: 400,
  cursor_ahead: 409,
  campaign_not_launched: 409,
  campaign_rejected: 409,
  campaign_no_content: 409,
  injection_waiting: 429,
  cap_reached: 429,
  unknown_group: 404,
  unknown_key: 404,
};

/** A `SluiceError` as an ingest route answers it: its status and `{ error: { code, message, path } }`. */
export function sendError(reply: FastifyReply, err: SluiceError, also: Record<string, unknown> = {}): FastifyReply {
  const status = STATUS[err.code] ?? 400;
  if (status === 401) void reply.header('WWW-Authenticate', 'Bearer realm="sluice"');
  if (err.retryAfterMs !== undefined) void reply.header('Retry-After', String(Math.ceil(err.retryAfterMs / 1000)));
  return reply.code(status).send({ error: { code: err.code, message: err.message, path: err.path }, ...also });
}

/** One `/v1` route and the scope it needs. */
export interface IngestRoute {
  method: string;
  url: string;
  scope: KeyScope;
}

/** The bearer token of a request, if it has one. */
function bearerOf(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/**
 * Every route of `app` needs a key with its scope: a route registered without `config.scope`
 * throws at start, so none can be added open by mistake. The key is read from Redis on every
 * request (a revocation holds at the next one); a refusal is audited by the authenticator.
 */
export function requireKeys(app: FastifyInstance, authenticator: Authenticator, routes: IngestRoute[]): void {
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope;
    const methods = [route.method].flat();
    if (scope === undefined) throw new Error(`ingest route ${methods.join(',')} ${route.url} names no scope`);
    for (const method of methods) if (method !== 'HEAD') routes.push({ method, url: route.url, scope });
  });
  app.addHook('preHandler', async (req, reply) => {
    const scope = req.routeOptions.config.scope!;
    try {
      const auth = await authenticator.authenticate(bearerOf(req), req.ip);
      try {
        requireScope(auth, scope);
      } catch (err) {
        await authenticator.refused(auth, 'key_scope');
        throw err;
      }
      req.auth = auth;
    } catch (err) {
      if (err instanceof SluiceError) return sendError(reply, err);
      throw err;
    }
  });
}
