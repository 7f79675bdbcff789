import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { SluiceError, type Keys } from '@sluice/core';
import { createApiKeys, createTenants, type ApiKeyRecord, type Authenticated } from '@sluice/store';
import { answering } from './messages.js';

/** What the tenant's own admin routes need. */
export interface TenantRoutesDeps {
  redis: Redis;
  keys: Keys;
  pepper: string | undefined;
}

/** A key as the API shows it: never its hash, and by its prefix and last four. */
const shownKey = (k: ApiKeyRecord) => ({ ...k, shown: `slc_${k.env}_${k.id}…${k.last4}` });

/** `{ enabled, reason }` of a status body, or `invalid_argument` naming the field. */
function ownerChange(req: FastifyRequest) {
  const body = (req.body ?? {}) as { enabled?: unknown; reason?: unknown };
  if (typeof body.enabled !== 'boolean') {
    throw new SluiceError('invalid_argument', 'enabled: must be true or false', { path: 'enabled' });
  }
  if (typeof body.reason !== 'string' || body.reason.length === 0 || body.reason.length > 500) {
    throw new SluiceError('invalid_argument', 'reason: must say why, in 1 to 500 characters', { path: 'reason' });
  }
  const auth: Authenticated = req.auth!;
  return { party: 'owner' as const, enabled: body.enabled, reason: body.reason, actor: `key:${auth.key.id}` };
}

/**
 * The tenant's own admin over HTTP (scope `admin`): its keys listed, and the owner's statuses of
 * the tenant and of its keys (the platform's are the operators', from the CLI). Another tenant's
 * key is not found, as one that does not exist.
 */
export function registerTenantRoutes(app: FastifyInstance, deps: TenantRoutesDeps): void {
  const tenants = createTenants({ redis: deps.redis, keys: deps.keys });
  const apiKeys = createApiKeys({ redis: deps.redis, keys: deps.keys, pepper: deps.pepper });
  const admin = { config: { scope: 'admin' as const } };

  app.get('/v1/keys', admin, async (req, reply) =>
    answering(reply, async () => reply.send({ keys: (await apiKeys.list(req.auth!.tenant.id)).map(shownKey) })),
  );
  app.post<{ Params: { id: string } }>('/v1/keys/:id/status', admin, async (req, reply) =>
    answering(reply, async () => {
      const key = await apiKeys.setStatus(req.auth!.tenant.id, req.params.id, ownerChange(req));
      return reply.send(shownKey(key));
    }),
  );
  app.post('/v1/tenant/status', admin, async (req, reply) =>
    answering(reply, async () => reply.send(await tenants.setStatus(req.auth!.tenant.id, ownerChange(req)))),
  );
}
