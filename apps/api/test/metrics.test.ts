import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKeys, parseConfig } from '@sluice/core';
import { createMetricsHandler, type MetricsHandler } from '@sluice/ops';
import { createApi, type Api } from '../src/api.js';
import { quietLogger } from './support.js';

describe('GET /metrics', () => {
  const redis = new Redis(inject('redisUrl'));
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const keys = createKeys(prefix);
  const config = parseConfig({
    redis: { url: inject('redisUrl'), prefix },
    providers: { ses: { kind: 'ses', rate: 50 } },
    receivers: [{ name: 'google', domains: ['gmail.com'], rate: 20 }],
  });
  let metrics: MetricsHandler;
  let api: Api;

  beforeAll(async () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    metrics = createMetricsHandler({ registry, config, redis, keys });
    api = createApi({ config, logger: quietLogger, redis, metrics });
    await api.server.ready();
  });

  afterAll(async () => {
    await api.close();
    await metrics.close();
    const found = await redis.keys(`*${prefix}*`);
    if (found.length) await redis.del(...found);
    await redis.quit();
  });

  it('answers Prometheus text with the fleet and the process', async () => {
    const res = await api.server.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    expect(text).toContain('# HELP sluice_key_effective_rate ');
    expect(text).toContain('# TYPE sluice_recipients_accepted_total counter');
    expect(text).toContain('sluice_status_up 1');
    expect(text).toContain('sluice_key_configured_rate{scope="provider",name="ses"} 50');
    expect(text).toContain('sluice_key_effective_rate{scope="receiver",name="google"} 20');
    expect(text).toContain('sluice_queue_waiting{queue="intake-critical",kind="intake",priority="critical"} 0');
    expect(text).toMatch(
      /^sluice_queue_oldest_age_seconds\{queue="intake-critical",kind="intake",priority="critical"\} 0$/m,
    );
    expect(text).toContain('sluice_recipients_attempted_total 0');
    // prom-client's process metrics.
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
  });

  it('is the only new route: the webhooks stay as they were', async () => {
    expect((await api.server.inject({ method: 'POST', url: '/metrics' })).statusCode).toBe(404);
    expect((await api.server.inject({ method: 'POST', url: '/webhooks/mailgun', payload: {} })).statusCode).toBe(503);
  });
});
