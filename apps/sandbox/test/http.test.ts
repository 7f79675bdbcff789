import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { sesClient, simpleEmail, startSandbox } from './helpers.js';

async function call(url: string, method: string, body?: string) {
  const res = await fetch(url, {
    method,
    body,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
  });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

describe('inspection endpoints', () => {
  it('serve health, accepted, stats, scenario and reset over HTTP', async () => {
    const sandbox = await startSandbox();
    await sesClient(sandbox.url).send(simpleEmail('a@example.com', { messageId: '<h1@sluice.test>' }));

    expect(await call(`${sandbox.url}/_sandbox/health`, 'GET')).toMatchObject({ status: 200, json: { ok: true } });
    const accepted = await call(`${sandbox.url}/_sandbox/accepted`, 'GET');
    expect(accepted.json).toEqual(sandbox.accepted());
    expect(accepted.json).toMatchObject([{ messageId: '<h1@sluice.test>', domain: 'example.com' }]);
    const stats = await call(`${sandbox.url}/_sandbox/stats`, 'GET');
    expect(stats.json).toEqual(sandbox.stats());
    expect(stats.json).toMatchObject({ accepted: 1, deferred: 0, dropped: 0 });

    expect(await call(`${sandbox.url}/_sandbox/reset`, 'POST')).toMatchObject({ status: 200 });
    expect(sandbox.accepted()).toEqual([]);
  });

  it('PUT /_sandbox/scenario installs a scenario, or answers 400 naming the field path', async () => {
    const sandbox = await startSandbox();
    const bad = await call(
      `${sandbox.url}/_sandbox/scenario`,
      'PUT',
      JSON.stringify({ domains: { 'example.com': { rate: -5 } } }),
    );
    expect(bad).toMatchObject({ status: 400, json: { error: 'invalid_scenario', path: 'domains.example.com.rate' } });

    const good = await call(
      `${sandbox.url}/_sandbox/scenario`,
      'PUT',
      JSON.stringify({ domains: { 'example.com': { bounce: ['*@example.com'] } } }),
    );
    expect(good.status).toBe(200);
    expect((await call(`${sandbox.url}/_sandbox/scenario`, 'GET')).json).toMatchObject({
      domains: { 'example.com': { bounce: ['*@example.com'] } },
    });
    await expect(sesClient(sandbox.url).send(simpleEmail('any@example.com'))).rejects.toMatchObject({
      name: 'MessageRejected',
    });
  });
});

describe('wire', () => {
  it('answers malformed JSON with BadRequestException, unknown routes with NotFoundException, always JSON', async () => {
    const sandbox = await startSandbox();
    const malformed = await call(`${sandbox.url}/v2/email/outbound-emails`, 'POST', '{"FromEmailAddress":');
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('x-amzn-errortype')).toBe('BadRequestException');
    expect(malformed.headers.get('content-type')).toBe('application/json');
    expect(malformed.headers.get('x-amzn-requestid')).toBeTruthy();
    expect(malformed.json).toEqual({ message: expect.any(String) as string });

    for (const [method, path] of [
      ['GET', '/v2/email/outbound-emails'],
      ['GET', '/nope'],
      ['DELETE', '/_sandbox/stats'],
    ] as const) {
      const res = await call(`${sandbox.url}${path}`, method);
      expect(res.status).toBe(404);
      expect(res.headers.get('x-amzn-errortype')).toBe('NotFoundException');
      expect(res.headers.get('content-type')).toBe('application/json');
    }
  });

  it('answers 429 with the SES error type header and body', async () => {
    const sandbox = await startSandbox({ scenario: { default: { rate: 0, burst: 0 } } });
    const body = JSON.stringify({
      FromEmailAddress: 'f@sluice.test',
      Destination: { ToAddresses: ['a@example.com'] },
      Content: { Simple: { Subject: { Data: 's' } } },
    });
    const res = await call(`${sandbox.url}/v2/email/outbound-emails`, 'POST', body);
    expect(res.status).toBe(429);
    expect(res.headers.get('x-amzn-errortype')).toBe(
      'TooManyRequestsException:http://internal.amazon.com/coral/com.amazonaws.sesv2/',
    );
    expect(res.json).toEqual({ message: 'Maximum sending rate exceeded.' });
  });

  it('close() does not wait for idle keep-alive sockets or delayed answers', async () => {
    const sandbox = await startSandbox({ scenario: { domains: { 'slow.test': { latencyMs: 60_000 } } } });
    const ses = sesClient(sandbox.url);
    await ses.send(simpleEmail('a@example.com'));
    // One request parked in its latency, on its own connection.
    const parked = new Promise<string>((resolve) => {
      const req = request(`${sandbox.url}/v2/email/outbound-emails`, { method: 'POST' });
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      req.on('response', () => resolve('answered'));
      req.end(
        JSON.stringify({
          FromEmailAddress: 'f@x.test',
          Destination: { ToAddresses: ['a@slow.test'] },
          Content: { Simple: {} },
        }),
      );
    });
    await expect.poll(() => sandbox.accepted().length).toBe(2);

    const start = Date.now();
    await sandbox.close();
    expect(Date.now() - start).toBeLessThan(1000);
    expect(await parked).toBe('ECONNRESET');
  });
});
