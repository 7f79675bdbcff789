import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SluiceError, parseMessage, type MessageInput, type MessageOrigin } from '@sluice/core';
import type { SluiceClient } from '@sluice/client';
import {
  requireMessageAllowed,
  requireSending,
  type Authenticated,
  type Authenticator,
  type Plans,
} from '@sluice/store';
import { sendError } from './auth.js';

/** The most messages one `POST /v1/messages/batch` takes. */
export const MAX_BATCH = 1_000;
/** A request body's limit: one message is at most 10 MB of text and html, and a batch far less each. */
const BODY_LIMIT = 24 * 1024 * 1024;

/** What the message routes need. */
export interface MessageRoutesDeps {
  client: SluiceClient;
  gate: SendingGate;
}

/** One message of a batch, as answered: accepted with its id, or refused with why. */
type BatchAnswer =
  | { status: 'accepted'; id: string; duplicate: boolean }
  | { status: 'refused'; error: { code: string; message: string; path: string | undefined } };

/**
 * A message as the key may send it: parsed as `send` parses it (errors name `<path>.<field>`),
 * its tenant the key's (another one named is refused), its stream and from-domain within the key's.
 */
function admissible(auth: Authenticated, body: unknown, path: readonly PropertyKey[]): MessageInput {
  const parsed = parseMessage(body, path);
  const named = (body as { tenantId?: unknown } | null)?.tenantId;
  const at = path.map(String).join('.');
  const field = (name: string): string => (at ? `${at}.${name}` : name);
  if (named !== undefined && named !== auth.tenant.id) {
    throw new SluiceError('key_scope', `${field('tenantId')}: the key sends for tenant ${auth.tenant.id} only`, {
      path: field('tenantId'),
    });
  }
  requireMessageAllowed(auth.key, { stream: parsed.stream, from: parsed.from.address }, at);
  return { ...(body as MessageInput), tenantId: auth.tenant.id };
}

/** What decides whether new mail may go in now. */
export interface SendingGate {
  authenticator: Authenticator;
  /** Refuses new mail while Redis is nearly full (`storage_full`). */
  storage: { check(): Promise<void> };
  /** Refuses new mail at a cap of a plan that refuses there (`cap_reached`). */
  plans: Pick<Plans, 'refuseAtCap'>;
}

/**
 * Refuses new mail of the key's tenant while either of its statuses is off (audited), at a cap
 * of a plan that refuses there, or while Redis is nearly full; nothing is written.
 */
export async function maySend(gate: SendingGate, auth: Authenticated): Promise<void> {
  try {
    requireSending(auth);
  } catch (err) {
    if (err instanceof SluiceError) await gate.authenticator.refused(auth, err.code);
    throw err;
  }
  await gate.plans.refuseAtCap(auth.tenant.id, auth.key.id);
  await gate.storage.check();
}

/** Answers a `SluiceError` as the route's error; anything else goes to the server's handler. */
export async function answering(reply: FastifyReply, work: () => Promise<unknown>): Promise<unknown> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof SluiceError) return sendError(reply, err);
    throw err;
  }
}

/** The record of a message of the key's tenant, or a 404 (another tenant's message is not found either). */
async function ownRecord(deps: MessageRoutesDeps, req: FastifyRequest<{ Params: { id: string } }>) {
  const record = await deps.client.messages.status(req.params.id);
  return record !== null && record.tenantId === req.auth!.tenant.id ? record : undefined;
}

/**
 * Sends the admissible messages in one `sendBulk`. One it refuses as a whole (an unknown or
 * cancelled campaign: nothing written) is answered refused and the rest sent again, so a batch
 * answers per message whatever the reason.
 */
async function sendEach(
  client: SluiceClient,
  inputs: { at: number; input: MessageInput }[],
  answers: BatchAnswer[],
  origin: MessageOrigin,
): Promise<{ at: number; id: string; duplicate: boolean }[]> {
  let pending = inputs;
  while (pending.length > 0) {
    try {
      const sent = await client.sendBulk(
        pending.map((x) => x.input),
        { origin },
      );
      return sent.map(({ id, duplicate }, j) => ({ at: pending[j]!.at, id, duplicate }));
    } catch (err) {
      const j = err instanceof SluiceError ? /^messages\.(\d+)/.exec(err.path ?? '')?.[1] : undefined;
      if (j === undefined || pending[Number(j)] === undefined) throw err;
      const { at } = pending[Number(j)]!;
      const e = err as SluiceError;
      const path = e.path!.replace(/^messages\.\d+/, `messages.${at}`);
      answers[at] = { status: 'refused', error: { code: e.code, message: e.message.replace(e.path!, path), path } };
      pending = pending.filter((_, k) => k !== Number(j));
    }
  }
  return [];
}

/** The request's key and address, recorded on each message it sends. */
const originOf = (req: FastifyRequest): MessageOrigin => ({ keyId: req.auth!.key.id, source: req.ip });

const notFound = (reply: FastifyReply, id: string): FastifyReply =>
  reply.code(404).send({ error: { code: 'not_found', message: `no message ${id}`, path: 'id' } });

/** `POST /v1/messages`, `POST /v1/messages/batch`, `GET /v1/messages/{id}` and its attempts. */
export function registerMessageRoutes(app: FastifyInstance, deps: MessageRoutesDeps): void {
  app.post('/v1/messages', { config: { scope: 'messages:send' }, bodyLimit: BODY_LIMIT }, async (req, reply) =>
    answering(reply, async () => {
      const auth = req.auth!;
      const input = admissible(auth, req.body, []);
      await maySend(deps.gate, auth);
      const { id, duplicate } = await deps.client.send(input, { origin: originOf(req) });
      return reply.code(duplicate ? 200 : 202).send({ id, duplicate });
    }),
  );

  app.post('/v1/messages/batch', { config: { scope: 'messages:send' }, bodyLimit: BODY_LIMIT }, async (req, reply) =>
    answering(reply, async () => {
      const auth = req.auth!;
      const messages = (req.body as { messages?: unknown } | null)?.messages;
      if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_BATCH) {
        throw new SluiceError('invalid_message', `messages: must be an array of 1 to ${MAX_BATCH} messages`, {
          path: 'messages',
        });
      }
      await maySend(deps.gate, auth);
      // Each message on its own: a refused one is answered and written nowhere, the others go.
      const answers: BatchAnswer[] = [];
      const inputs: { at: number; input: MessageInput }[] = [];
      messages.forEach((body, i) => {
        try {
          inputs.push({ at: i, input: admissible(auth, body, ['messages', i]) });
        } catch (err) {
          if (!(err instanceof SluiceError)) throw err;
          answers[i] = { status: 'refused', error: { code: err.code, message: err.message, path: err.path } };
        }
      });
      const sent = await sendEach(deps.client, inputs, answers, originOf(req));
      sent.forEach(({ at, id, duplicate }) => (answers[at] = { status: 'accepted', id, duplicate }));
      const accepted = sent.length;
      return reply
        .code(accepted === messages.length ? 202 : 207)
        .send({ accepted, refused: messages.length - accepted, results: answers });
    }),
  );

  app.get<{ Params: { id: string } }>('/v1/messages/:id', { config: { scope: 'read' } }, async (req, reply) => {
    const record = await ownRecord(deps, req);
    return record === undefined ? notFound(reply, req.params.id) : reply.send(record);
  });

  app.get<{ Params: { id: string } }>(
    '/v1/messages/:id/attempts',
    { config: { scope: 'read' } },
    async (req, reply) => {
      const record = await ownRecord(deps, req);
      if (record === undefined) return notFound(reply, req.params.id);
      return reply.send({ id: record.id, attempts: await deps.client.messages.attempts(req.params.id) });
    },
  );
}
