import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SluiceError } from '@sluice/core';
import type { SluiceClient } from '@sluice/client';
import { MAX_TENANT_GROUPS, tenantGroup, tenantGroupNames, type OutcomeEvent } from '@sluice/store';
import { answering } from './messages.js';

/** What the outcome routes need. */
export interface OutcomeRoutesDeps {
  client: SluiceClient;
}

/** The longest a read waits for an event over HTTP (`waitMs`). */
const MAX_WAIT_MS = 20_000;
/** Reads of other tenants' events one request passes over before it answers with what it has. */
const MAX_ROUNDS = 20;
/** How often a waiting read looks again: it polls, as one blocked connection would serve one request at a time. */
const POLL_MS = 200;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type ByName = FastifyRequest<{ Params: { name: string } }>;

/** A body as an object (a missing one is empty), or `invalid_argument`. */
function bodyOf(req: FastifyRequest): Record<string, unknown> {
  const body = req.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new SluiceError('invalid_argument', 'body: must be a JSON object', { path: 'body' });
  }
  return body as Record<string, unknown>;
}

/** An optional integer field within bounds, or `invalid_argument` naming it. */
function integerField(body: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const value = body[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new SluiceError('invalid_argument', `${name}: must be an integer from ${min} to ${max}`, { path: name });
  }
  return value;
}

/**
 * Outcomes over HTTP (docs/design/tenants-and-keys.md): a tenant's consumer groups on the
 * fleet's outcome stream, each named `tenant:<tenant>:<name>` in Redis. A read answers the
 * tenant's own events only, and acknowledges the others' for that group as it passes them;
 * at least once, as `client.outcomes` is: acknowledge what was handled, or it comes back.
 */
export function registerOutcomeRoutes(app: FastifyInstance, deps: OutcomeRoutesDeps): void {
  const { client } = deps;
  const scope = { config: { scope: 'outcomes:read' as const } };
  const tenantOf = (req: FastifyRequest): string => req.auth!.tenant.id;

  const groupsOf = async (tenant: string): Promise<string[]> =>
    tenantGroupNames(tenant, await client.outcomes.groups()).sort();

  app.get('/v1/outcomes/groups', scope, async (req, reply) =>
    answering(reply, async () => reply.send({ groups: await groupsOf(tenantOf(req)) })),
  );

  app.post('/v1/outcomes/groups', scope, async (req, reply) =>
    answering(reply, async () => {
      const body = bodyOf(req);
      const tenant = tenantOf(req);
      const group = tenantGroup(tenant, body.name);
      const from = body.from ?? 'now';
      const existing = await groupsOf(tenant);
      if (!existing.includes(String(body.name)) && existing.length >= MAX_TENANT_GROUPS) {
        throw new SluiceError(
          'invalid_argument',
          `name: tenant ${tenant} has ${existing.length} outcome groups, the most it may (delete one first)`,
          { path: 'name' },
        );
      }
      const { created } = await client.outcomes.subscribe(group, { from: from as 'now' | 'start' });
      return reply.code(created ? 201 : 200).send({ name: body.name, created });
    }),
  );

  app.delete<{ Params: { name: string } }>('/v1/outcomes/groups/:name', scope, async (req: ByName, reply) =>
    answering(reply, async () => {
      const gone = await client.outcomes.unsubscribe(tenantGroup(tenantOf(req), req.params.name));
      if (!gone) throw new SluiceError('unknown_group', `no outcome group ${req.params.name}`, { path: 'name' });
      return reply.code(204).send();
    }),
  );

  app.post<{ Params: { name: string } }>('/v1/outcomes/groups/:name/read', scope, async (req: ByName, reply) =>
    answering(reply, async () => {
      const body = bodyOf(req);
      const tenant = tenantOf(req);
      const group = tenantGroup(tenant, req.params.name);
      const count = integerField(body, 'count', 100, 1, 1_000);
      const waitMs = integerField(body, 'waitMs', 0, 0, MAX_WAIT_MS);
      const consumer = body.consumer ?? 'http';
      const until = Date.now() + waitMs;
      let events: OutcomeEvent[] = [];
      // Other tenants' events are passed over (acknowledged for this group) until some of the
      // tenant's come, or none are left and the wait is over.
      for (let round = 0; events.length === 0;) {
        const read = await client.outcomes.read(group, consumer as string, { count });
        events = read.filter((e) => e.tenantId === tenant);
        const others = read.filter((e) => e.tenantId !== tenant).map((e) => e.id);
        if (others.length > 0) await client.outcomes.ack(group, others);
        if (events.length > 0 || (read.length > 0 && ++round >= MAX_ROUNDS)) break;
        if (read.length === 0) {
          if (Date.now() >= until) break;
          await sleep(Math.min(POLL_MS, until - Date.now()));
        }
      }
      return reply.send({ events });
    }),
  );

  app.post<{ Params: { name: string } }>('/v1/outcomes/groups/:name/ack', scope, async (req: ByName, reply) =>
    answering(reply, async () => {
      const { ids } = bodyOf(req);
      if (!Array.isArray(ids) || ids.length > 10_000) {
        throw new SluiceError('invalid_argument', 'ids: must be an array of at most 10000 event ids', { path: 'ids' });
      }
      const acknowledged = await client.outcomes.ack(tenantGroup(tenantOf(req), req.params.name), ids as string[]);
      return reply.send({ acknowledged });
    }),
  );
}
