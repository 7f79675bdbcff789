import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { SCHEMA_VERSION, loadConfig } from '@sluice/core';
import { promtoolPath } from './support/env.js';
import { waitFor } from './support/fleet.js';
import { logProblems } from './support/json-lines.js';
import { ROOT } from './support/process.js';
import { freePort } from './support/redis-server.js';
import { metricsUrl, sampleSum as sum } from './support/scrape.js';
import { useFleet } from './support/use-fleet.js';

const N = 40;
const token = randomBytes(32).toString('base64');
const adminPort = await freePort();

// Every process serves /metrics on a port of its own (0: any free one, logged at start).
const fleet = useFleet({
  schedulers: 1,
  workers: 2,
  config: {
    metrics: { port: 0 },
    api: { port: 0 },
    admin: { port: adminPort, tokens: [{ actor: 'prometheus', token }] },
  },
});

async function scrape(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(url, { headers });
  expect(res.status, url).toBe(200);
  return res.text();
}

/** `promtool check metrics` on one scrape: any error or lint problem fails with promtool's words. */
function promtool(name: string, text: string): void {
  const run = spawnSync(promtoolPath(), ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error) throw new Error(`promtool could not run (${promtoolPath()}): ${run.error.message}`);
  const said = `${run.stdout}${run.stderr}`.trim();
  expect(`${name}: exit ${run.status} ${said}`).toBe(`${name}: exit 0 `);
}

it('serves /metrics promtool accepts from every process, and the workers count every send once', async () => {
  const f = fleet();
  const api = await f.startApp('api');
  const admin = await f.startApp('admin');
  const scheduler = f.processes.find((p) => p.name.startsWith('scheduler'))!;
  const workers = f.processes.filter((p) => p.name.startsWith('worker'));
  expect(workers).toHaveLength(2);

  for (let i = 0; i < N; i++) {
    await f.client.send({
      from: 'Acme <news@acme.test>',
      to: `user${i}@example.test`,
      subject: `hello ${i}`,
      text: 'hi',
      priority: i % 2 ? 'high' : 'normal',
    });
  }
  await waitFor(() => f.sandbox.accepted().length >= N, 30_000, `${N} accepted`);
  const stats = (await (await fetch(`${f.sandbox.url}/_sandbox/stats`)).json()) as { accepted: number };
  expect(stats.accepted).toBe(N);

  // Counted by the worker that sent each, in memory, once the provider answered.
  const counted = async (): Promise<{ accepted: number; all: number; latency: number }> => {
    const texts = await Promise.all(workers.map((w) => scrape(metricsUrl(w))));
    return {
      accepted: texts.reduce((n, t) => n + sum(t, 'sluice_sends_total', { outcome: 'accepted' }), 0),
      all: texts.reduce((n, t) => n + sum(t, 'sluice_sends_total'), 0),
      latency: texts.reduce((n, t) => n + sum(t, 'sluice_delivery_latency_seconds_count'), 0),
    };
  };
  await waitFor(async () => (await counted()).latency === N, 10_000, 'every send counted');
  expect(await counted()).toEqual({ accepted: stats.accepted, all: stats.accepted, latency: N });

  // The scheduler leads (it is the only one) and serves the fleet's figures.
  const fleetText = await waitFor(
    async () => {
      const t = await scrape(metricsUrl(scheduler));
      return /^sluice_leader 1$/m.test(t) && /^sluice_status_up 1$/m.test(t) ? t : null;
    },
    10_000,
    'the scheduler leading',
  );
  expect(fleetText).toMatch(
    /^sluice_queue_waiting\{queue="dispatch-normal-\{b32\.76\}",kind="dispatch",priority="normal"\} \d/m,
  );
  expect(fleetText).toMatch(/^sluice_key_configured_rate\{scope="provider",name="ses"\} \d/m);
  // The heartbeat's figures: one scheduler, two workers, and the sandbox provider they send with.
  expect(sum(fleetText, 'sluice_fleet_processes', { role: 'worker' })).toBe(2);
  expect(sum(fleetText, 'sluice_fleet_processes', { role: 'scheduler', schema: String(SCHEMA_VERSION) })).toBe(1);
  expect(fleetText).toMatch(/^sluice_fleet_sandbox_providers\{provider="ses"\} 1$/m);
  expect(fleetText).toMatch(/^sluice_unscheduled_messages 0$/m);

  // promtool on every process's /metrics: scheduler, both workers, api, admin (with its token).
  const adminUrl = `http://127.0.0.1:${adminPort}/metrics`;
  const scrapes: [string, string][] = [
    ['scheduler', fleetText],
    ...workers.map((w, i): [string, string] => [`worker ${i + 1}`, '']),
    ['api', await scrape(metricsUrl(api))],
  ];
  for (const [i, w] of workers.entries()) scrapes[i + 1]![1] = await scrape(metricsUrl(w));
  const res = await fetch(adminUrl, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'scrape-1' } });
  expect(res.status).toBe(200);
  expect(res.headers.get('x-request-id')).toBe('scrape-1');
  scrapes.push(['admin', await res.text()]);
  expect((await fetch(adminUrl)).status).toBe(401);
  for (const [name, text] of scrapes) {
    expect(text).toMatch(/^process_resident_memory_bytes \d/m);
    expect(text, name).toMatch(/^sluice_redis_up 1$/m);
    // The built-in provider is the sandbox: every process with a metrics port says so.
    if (name !== 'admin') expect(text, name).toMatch(/^sluice_sandbox_provider\{provider="ses"\} 1$/m);
    promtool(name, text);
  }
  // Fleet figures come from the leading scheduler alone: a sum over processes counts them once.
  for (const [name, text] of scrapes.filter(([n]) => n !== 'scheduler'))
    expect(text, name).not.toMatch(/^sluice_(queue|key|status|recipients)_\S* /m);

  // The Grafana dashboard asks only for metrics some process serves.
  const served = new Set(scrapes.flatMap(([, t]) => [...t.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!)));
  const dashboard = readFileSync(join(ROOT, 'infra/grafana/sluice-dashboard.json'), 'utf8');
  const asked = new Set(
    [...dashboard.matchAll(/\b(sluice_[a-z_]+|process_[a-z_]+|nodejs_[a-z_0-9]+)/g)].map((m) => m[1]!),
  );
  expect([...asked].filter((n) => !served.has(n.replace(/_(bucket|sum|count)$/, '')))).toEqual([]);

  // One line per request, with its id; never the token.
  await waitFor(() => admin.output().includes('"reqId":"scrape-1"'), 5_000, 'the request line');
  const line = admin
    .output()
    .split('\n')
    .find((l) => l.includes('"reqId":"scrape-1"'))!;
  expect(JSON.parse(line)).toMatchObject({
    msg: 'request completed',
    req: { method: 'GET', path: '/metrics' },
    res: { statusCode: 200 },
  });
  for (const p of f.processes) {
    expect(p.output()).not.toContain(token);
    expect(logProblems(p.output()), p.name).toEqual([]);
  }
});

it('ships a compose config that serves /metrics and a Prometheus config promtool accepts', () => {
  expect(loadConfig({ env: {}, path: join(ROOT, 'infra/sluice.yaml') }).metrics).toEqual({
    host: '0.0.0.0',
    port: 9464,
  });
  const run = spawnSync(promtoolPath(), ['check', 'config', join(ROOT, 'infra/prometheus.yml')], { encoding: 'utf8' });
  expect(`${run.status} ${run.stdout}${run.stderr}`).toMatch(/^0 .*SUCCESS/s);
});
