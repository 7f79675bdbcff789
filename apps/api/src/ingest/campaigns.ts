import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { SluiceError, type Keys, type SluiceConfig } from '@sluice/core';
import type { SluiceClient } from '@sluice/client';
import { cancelCampaign } from '@sluice/ops';
import type { Authenticated, LaunchForecastInput } from '@sluice/store';
import { answering, maySend, type SendingGate } from './messages.js';
import { registerRecipientRoutes } from './recipients.js';

/** What the campaign routes need. */
export interface CampaignRoutesDeps {
  client: SluiceClient;
  config: SluiceConfig;
  redis: Redis;
  keys: Keys;
  gate: SendingGate;
}

/** The longest a launch waits for a scheduler's decision over HTTP (`waitMs` in its body). */
const MAX_LAUNCH_WAIT_MS = 30_000;

type ById = FastifyRequest<{ Params: { id: string } }>;

/** Who does it, as the campaign's audit keeps it: the API key. */
const actorOf = (auth: Authenticated): string => `key:${auth.key.id}`;

/** A body as an object (a missing one is empty), or `invalid_argument`. */
function bodyOf(req: FastifyRequest): Record<string, unknown> {
  const body = req.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new SluiceError('invalid_argument', 'body: must be a JSON object', { path: 'body' });
  }
  return body as Record<string, unknown>;
}

/**
 * Campaigns over HTTP (docs/design/tenants-and-keys.md): create, status, launch, pause, resume,
 * cancel and recipients (`registerRecipientRoutes`), each of the key's tenant only: another tenant's campaign is not found, as one that
 * does not exist. Each calls what `@sluice/client` (and `@sluice/ops` for a cancel) does.
 */
export function registerCampaignRoutes(app: FastifyInstance, deps: CampaignRoutesDeps): void {
  const { client } = deps;

  /** The campaign, if it is the key's tenant's; else `unknown_campaign`. */
  async function own(req: ById): Promise<string> {
    const { id } = req.params;
    const campaign = await client.campaigns.get(id);
    if (campaign === null || campaign.tenantId !== req.auth!.tenant.id) {
      throw new SluiceError('unknown_campaign', `no campaign with id ${id}`, { path: 'id' });
    }
    return id;
  }
  const write = { config: { scope: 'campaigns:write' as const } };
  registerRecipientRoutes(app, { client, own, maySend: (req) => maySend(deps.gate, req.auth!) });

  app.post('/v1/campaigns', write, async (req, reply) =>
    answering(reply, async () => {
      const body = bodyOf(req);
      const tenant = req.auth!.tenant.id;
      if (body.tenantId !== undefined && body.tenantId !== tenant) {
        throw new SluiceError('key_scope', `tenantId: the key acts for tenant ${tenant} only`, { path: 'tenantId' });
      }
      // `create` checks every field, naming a bad one.
      const campaign = await client.campaigns.create({ ...body, tenantId: tenant });
      return reply.code(201).send(campaign);
    }),
  );

  app.get<{ Params: { id: string } }>('/v1/campaigns/:id', { config: { scope: 'read' } }, async (req, reply) =>
    answering(reply, async () => reply.send(await client.campaigns.status(await own(req)))),
  );

  app.post<{ Params: { id: string } }>('/v1/campaigns/:id/launch', write, async (req, reply) =>
    answering(reply, async () => {
      const id = await own(req);
      const { waitMs, stream, ...forecast } = bodyOf(req);
      if (
        waitMs !== undefined &&
        (!Number.isInteger(waitMs) || (waitMs as number) < 0 || (waitMs as number) > MAX_LAUNCH_WAIT_MS)
      ) {
        throw new SluiceError('invalid_argument', `waitMs: must be an integer from 0 to ${MAX_LAUNCH_WAIT_MS}`, {
          path: 'waitMs',
        });
      }
      const record = await client.campaigns.launch(id, forecast as unknown as LaunchForecastInput, {
        actor: actorOf(req.auth!),
        ...(typeof stream === 'string' ? { stream } : {}),
        ...(waitMs !== undefined ? { timeoutMs: waitMs as number } : {}),
      });
      return reply.send(record);
    }),
  );

  for (const action of ['pause', 'resume'] as const) {
    app.post<{ Params: { id: string } }>(`/v1/campaigns/:id/${action}`, write, async (req, reply) =>
      answering(reply, async () => {
        const id = await own(req);
        await client.campaigns[action](id);
        return reply.send(await client.campaigns.status(id));
      }),
    );
  }

  app.post<{ Params: { id: string } }>('/v1/campaigns/:id/cancel', write, async (req, reply: FastifyReply) =>
    answering(reply, async () => {
      const id = await own(req);
      const { reason } = bodyOf(req);
      if (typeof reason !== 'string' || reason.length === 0 || reason.length > 500) {
        throw new SluiceError('invalid_argument', 'reason: must say why, in 1 to 500 characters', { path: 'reason' });
      }
      const result = await cancelCampaign(deps, id, { actor: actorOf(req.auth!), reason });
      return reply.send(result);
    }),
  );
}
