import type { FastifyInstance, FastifySchema } from 'fastify';
import swagger from '@fastify/swagger';
import { z } from 'zod';
import { ERROR_CODES, messageInputSchema, recipientSchema, SCHEMA_VERSION } from '@sluice/core';
import { campaignInputSchema, launchForecastSchema } from '@sluice/store';

type Json = Record<string, unknown>;

/** A zod schema of `@sluice/core` or `@sluice/store` as the JSON Schema of what a client sends. */
function fromZod(schema: z.ZodType): Json {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  return json;
}

const object = (properties: Json, required: string[] = [], extra: Json = {}): Json => ({
  type: 'object',
  properties,
  required,
  ...extra,
});
const integer = (description: string, min = 0, max?: number): Json => ({
  type: 'integer',
  minimum: min,
  ...(max !== undefined ? { maximum: max } : {}),
  description,
});
const anyObject = (description: string): Json => ({ type: 'object', additionalProperties: true, description });

const errorSchema = object(
  {
    error: object(
      {
        code: {
          type: 'string',
          description: `A \`SluiceError\` code (docs/reference/errors.md: ${Object.keys(ERROR_CODES).length} of them), or the server's own: malformed (not JSON), too_large, not_found (no such route or message), internal`,
        },
        message: { type: 'string' },
        path: { type: 'string', description: 'The field at fault, when one is' },
      },
      ['code', 'message'],
    ),
  },
  ['error'],
  { description: 'An error: its code is one of docs/reference/errors.md' },
);
const cursorSchema = object(
  { position: integer('Recipients accepted so far: resume with ?from=<position>'), value: { type: 'string' } },
  ['position'],
);
const eventSchema = object(
  {
    id: { type: 'string', description: 'What /ack takes' },
    messageId: { type: 'string' },
    state: { type: 'string', enum: ['sent', 'rejected', 'suppressed', 'expired', 'cancelled', 'deferred'] },
    campaignId: { type: 'string' },
    tenantId: { type: 'string' },
    key: { type: 'string' },
    providerMessageId: { type: 'string' },
    family: { type: 'string' },
    at: integer('Epoch ms'),
  },
  ['id', 'messageId', 'state', 'tenantId', 'at'],
);
const idParams = object({ id: { type: 'string' } }, ['id']);
const nameParams = object({ name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' } }, ['name']);

/** The refusals every route may answer, whatever it does. */
const REFUSALS: Record<number, string> = {
  401: 'No key, or one that is not valid (key_missing, key_malformed, key_invalid, key_revoked, key_expired)',
  403: "A key without the route's scope, or used from outside its CIDRs (key_scope, key_source)",
  503: 'Redis away, keys not configured, or storage full: retry (redis_unavailable, keys_unconfigured, storage_full)',
};

/** The owner's status as set over HTTP. */
const STATUS_BODY = object({ enabled: { type: 'boolean' }, reason: { type: 'string', minLength: 1, maxLength: 500 } }, [
  'enabled',
  'reason',
]);

/** New mail at a cap of a plan that refuses there. */
const CAPPED =
  "cap_reached: the tenant or key is at a cap of a plan that refuses there; Retry-After is the window's end";

interface RouteDoc {
  summary: string;
  body?: Json;
  /** The body's content type, when not JSON. */
  consumes?: string[];
  querystring?: Json;
  params?: Json;
  /** Status → the answer's schema (and its description). */
  answers: Record<number, Json | string>;
}

/** Each `/v1` route's request and answers, by `METHOD url`. A route with none is refused at start. */
const ROUTES: Record<string, RouteDoc> = {
  'POST /v1/messages': {
    summary: 'Sends one message',
    body: fromZod(messageInputSchema),
    answers: {
      202: object({ id: { type: 'string' }, duplicate: { type: 'boolean' } }, ['id', 'duplicate']),
      200: 'A message with this idempotencyKey was accepted before: its id',
      400: 'A field is not valid (invalid_message, path names it)',
      429: CAPPED,
    },
  },
  'POST /v1/messages/batch': {
    summary: 'Sends 1 to 1,000 messages, each accepted or refused on its own',
    body: object({ messages: { type: 'array', items: fromZod(messageInputSchema), minItems: 1, maxItems: 1000 } }, [
      'messages',
    ]),
    answers: {
      202: object({
        accepted: integer('Messages accepted'),
        refused: integer('Messages refused, written nowhere'),
        results: { type: 'array', items: anyObject('{ status: accepted, id } or { status: refused, error }') },
      }),
      207: 'Some were refused: the same body',
      400: 'messages is not an array of 1 to 1,000',
      429: CAPPED,
    },
  },
  'GET /v1/messages/:id': {
    summary: "A message's record: its state, attempts so far, origin",
    params: idParams,
    answers: {
      200: anyObject('The message record (docs/reference/client.md, MessageRecord)'),
      404: 'No such message of this tenant',
    },
  },
  'GET /v1/messages/:id/attempts': {
    summary: "A message's attempts, oldest first",
    params: idParams,
    answers: {
      200: object({ id: { type: 'string' }, attempts: { type: 'array', items: anyObject('An attempt') } }),
      404: 'No such message of this tenant',
    },
  },
  'POST /v1/campaigns': {
    summary: 'Creates a campaign of the key’s tenant',
    body: fromZod(campaignInputSchema),
    answers: { 201: anyObject('The campaign'), 400: 'A field is not valid', 409: 'campaign_exists' },
  },
  'GET /v1/campaigns/:id': {
    summary: "A campaign's status: counters, window, cursor, launch",
    params: idParams,
    answers: { 200: anyObject('CampaignStatus'), 404: 'unknown_campaign' },
  },
  'POST /v1/campaigns/:id/launch': {
    summary: "Asks for the campaign's admission decision on a forecast, and waits for it",
    params: idParams,
    body: object({
      ...(fromZod(launchForecastSchema).properties as Json),
      stream: { type: 'string' },
      waitMs: integer('How long to wait for a decision', 0, 30_000),
    }),
    answers: {
      200: anyObject('The launch record and its decision'),
      404: 'unknown_campaign',
      409: 'campaign_launched',
      503: 'no_scheduler: none decided within waitMs',
    },
  },
  'POST /v1/campaigns/:id/recipients': {
    summary: "Streams a launched campaign's recipients, one JSON object a line",
    consumes: ['application/x-ndjson', 'application/jsonl'],
    params: idParams,
    body: fromZod(recipientSchema),
    querystring: object({
      from: integer('The position of the first line: the cursor to resume from'),
      waitMs: integer('How long to wait for room before a 429', 0, 30_000),
      chunkSize: integer('Recipients written per transaction', 1, 10_000),
      invalid: { type: 'string', enum: ['stop', 'reject'] },
    }),
    answers: {
      200: object({
        cursor: cursorSchema,
        accepted: integer(''),
        skipped: integer(''),
        rejected: integer(''),
        expired: integer(''),
      }),
      400: 'A line is not a valid recipient (invalid_recipient, path recipients.<position>): the ones before are written',
      409: 'campaign_not_launched, cursor_ahead, campaign_cancelled',
      429: `injection_waiting: the window stayed full for waitMs; Retry-After, and the cursor to resume from. Or ${CAPPED}`,
    },
  },
  'POST /v1/campaigns/:id/pause': {
    summary: 'Pauses a campaign',
    params: idParams,
    answers: { 200: anyObject('CampaignStatus'), 404: 'unknown_campaign' },
  },
  'POST /v1/campaigns/:id/resume': {
    summary: 'Resumes a campaign',
    params: idParams,
    answers: { 200: anyObject('CampaignStatus'), 404: 'unknown_campaign', 409: 'campaign_cancelled' },
  },
  'POST /v1/campaigns/:id/cancel': {
    summary: 'Cancels a campaign: every message not sent ends cancelled',
    params: idParams,
    body: object({ reason: { type: 'string', minLength: 1, maxLength: 500 } }, ['reason']),
    answers: { 200: anyObject('What the cancel did'), 404: 'unknown_campaign' },
  },
  'GET /v1/outcomes/groups': {
    summary: "The tenant's outcome groups",
    answers: { 200: object({ groups: { type: 'array', items: { type: 'string' } } }, ['groups']) },
  },
  'POST /v1/outcomes/groups': {
    summary: 'Makes an outcome group (at most 5 a tenant)',
    body: object(
      { name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' }, from: { type: 'string', enum: ['now', 'start'] } },
      ['name'],
    ),
    answers: { 201: object({ name: { type: 'string' }, created: { type: 'boolean' } }), 200: 'It was there already' },
  },
  'DELETE /v1/outcomes/groups/:name': {
    summary: 'Removes an outcome group',
    params: nameParams,
    answers: { 204: 'Removed', 404: 'unknown_group' },
  },
  'POST /v1/outcomes/groups/:name/read': {
    summary: "The tenant's next events for a consumer: its unacknowledged first",
    params: nameParams,
    body: object({
      consumer: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,64}$' },
      count: integer('At most this many events', 1, 1_000),
      waitMs: integer('Wait up to this long for one', 0, 20_000),
    }),
    answers: { 200: object({ events: { type: 'array', items: eventSchema } }, ['events']), 404: 'unknown_group' },
  },
  'POST /v1/outcomes/groups/:name/ack': {
    summary: 'Acknowledges events by id',
    params: nameParams,
    body: object({ ids: { type: 'array', items: { type: 'string' }, maxItems: 10_000 } }, ['ids']),
    answers: { 200: object({ acknowledged: integer('How many were pending') }), 404: 'unknown_group' },
  },
  'GET /v1/keys': {
    summary: "The tenant's API keys, by id and last four (never a token or its hash)",
    answers: {
      200: object({ keys: { type: 'array', items: anyObject('An API key record, with `shown`') } }, ['keys']),
    },
  },
  'POST /v1/keys/:id/status': {
    summary: "Sets the owner's status of one of the tenant's keys: mail sent with it is refused while disabled",
    params: idParams,
    body: STATUS_BODY,
    answers: { 200: anyObject('The key'), 400: 'enabled or reason is not valid', 404: 'unknown_key' },
  },
  'POST /v1/tenant/status': {
    summary: "Sets the owner's status of the key's tenant: its mail is refused while disabled",
    body: STATUS_BODY,
    answers: { 200: anyObject('The tenant'), 400: 'enabled or reason is not valid' },
  },
  'GET /v1/openapi.json': { summary: 'This document', answers: { 200: anyObject('OpenAPI 3.1') } },
};

/** The fastify schema of a route's doc: documentation only (the handlers parse with zod). */
function schemaOf(method: string, url: string, scope: string): FastifySchema {
  const doc = ROUTES[`${method} ${url}`];
  if (doc === undefined)
    throw new Error(`ingest route ${method} ${url} has no OpenAPI doc (apps/api/src/ingest/openapi.ts)`);
  const response: Json = {};
  for (const [status, answer] of Object.entries({ ...REFUSALS, ...doc.answers })) {
    const error = Number(status) >= 400;
    response[status] =
      typeof answer === 'string'
        ? { description: answer, ...(error ? errorSchema : Number(status) === 204 ? {} : { type: 'object' }) }
        : answer;
  }
  return {
    summary: doc.summary,
    description: `Scope: \`${scope}\`.`,
    tags: [url === '/v1/openapi.json' ? 'meta' : url.split('/')[2]!],
    security: [{ bearer: [] }],
    ...(doc.body ? { body: doc.body } : {}),
    ...(doc.consumes ? { consumes: doc.consumes } : {}),
    ...(doc.querystring ? { querystring: doc.querystring } : {}),
    ...(doc.params ? { params: doc.params } : {}),
    response,
  };
}

/**
 * The OpenAPI document of the `/v1` routes (`GET /v1/openapi.json`), generated by
 * `@fastify/swagger` from the routes as registered: each route's schema is its doc above, its
 * bodies the zod schemas of `@sluice/core` and `@sluice/store` as JSON Schema. The schemas
 * document; they do not validate (the handlers parse with zod, so an error names the field as
 * `send` does) nor filter answers. Registered on the server before the routes.
 */
export function useOpenApi(server: FastifyInstance): void {
  void server.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sluice HTTP API',
        version: `store schema ${SCHEMA_VERSION}`,
        description:
          'Mail in over HTTP: messages, campaigns, outcomes. Every route needs an API key (docs/design/tenants-and-keys.md).',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'slc_live_… or slc_test_…' } },
      },
    },
    // The ESPs' webhooks and the probes are not this API.
    transform: ({ schema, url }) => ({ schema: url.startsWith('/v1/') ? schema : { ...schema, hide: true }, url }),
  });
}

/** Gives every route of the ingest scope its doc, and keeps the schemas from validating or filtering. */
export function documentRoutes(app: FastifyInstance): void {
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.addHook('onRoute', (route) => {
    // A GET's HEAD is the GET's (fastify adds it).
    const method = [route.method].flat()[0]!.replace(/^HEAD$/, 'GET');
    route.schema = schemaOf(method, route.url, route.config?.scope ?? '');
  });
  app.get('/v1/openapi.json', { config: { scope: 'read' } }, async (_req, reply) => reply.send(app.swagger()));
}
