import SwaggerParser from '@apidevtools/swagger-parser';
import { expect, it } from 'vitest';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { useIngest } from './support.js';

// The OpenAPI document the api serves: valid, and naming every route it has.
const r = useRedisPrefix();
const ingest = useIngest(r);

interface Operation {
  security?: unknown[];
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
  responses: Record<string, unknown>;
}
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

async function documentOf(token?: string): Promise<{ status: number; body: Document }> {
  const res = await fetch(`${ingest().base}/v1/openapi.json`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return { status: res.status, body: (await res.json()) as Document };
}

it('serves an OpenAPI 3.1 document that validates and has every /v1 route, and nothing else', async () => {
  expect((await documentOf()).status).toBe(401);
  const { token } = await ingest().keys.create('acme', { scopes: ['read'] });
  const { status, body } = await documentOf(token);
  expect(status).toBe(200);
  expect(body.openapi).toBe('3.1.0');
  // A copy: the validator dereferences in place.
  await expect(SwaggerParser.validate(structuredClone(body) as never)).resolves.toBeDefined();
  // The validator would say so of one that is not: a response without its description.
  const broken = structuredClone(body);
  broken.paths['/v1/messages']!.post!.responses['202'] = { content: {} };
  await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();

  const routes = ingest().world.api.ingestRoutes;
  expect(routes.length).toBeGreaterThan(15);
  const listed = Object.entries(body.paths).flatMap(([path, ops]) =>
    Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
  );
  const served = routes.map((route) => `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`);
  expect(listed.sort()).toEqual([...new Set(served)].sort());
  for (const [path, ops] of Object.entries(body.paths)) {
    for (const op of Object.values(ops)) {
      expect(op.security, path).toEqual([{ bearer: [] }]);
      expect(op.responses, path).toHaveProperty('401');
    }
  }
  // A message's body is the zod schema of `send`, its fields named.
  const send = body.paths['/v1/messages']!.post!.requestBody!.content['application/json']!.schema;
  expect(Object.keys(send.properties ?? {})).toEqual(expect.arrayContaining(['from', 'to', 'subject', 'stream']));
  expect(Object.keys(body.paths['/v1/campaigns/{id}/recipients']!.post!.requestBody!.content)).toEqual([
    'application/x-ndjson',
    'application/jsonl',
  ]);
});
