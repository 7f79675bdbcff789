import { Redis } from 'ioredis';
import { createClient, type SluiceClient } from '@sluice/client';
import { SCHEMA_VERSION, SLUICE_VERSION, SluiceError, createKeys } from '@sluice/core';
import { createHeartbeat, readFleet } from '@sluice/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// A backend's client looks for its fleet before its first write: a prefix no fleet uses, or a
// fleet of another store schema, is an error (or a warning) instead of mail that waits for ever.
const fleet = useFleet({ schedulers: 0, workers: 0 });
const message = { from: 'app@acme.test', subject: 'hi', text: 'hello' };
let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
});
afterAll(async () => {
  await redis.quit();
});

function client(prefix: string, options: Partial<Parameters<typeof createClient>[0]> = {}): SluiceClient {
  return createClient({ redis: inject('redisUrl'), prefix, timeoutMs: 5_000, ...options });
}

async function keysUnder(prefix: string): Promise<string[]> {
  return redis.keys(`*${prefix}*`);
}

describe('the client and its fleet', () => {
  it('a prefix no fleet uses: the first send fails with no_fleet naming the prefix, and writes nothing', async () => {
    const c = client('nofleet1');
    const err = await c.send({ ...message, to: 'a@accept.test' }).catch((e: unknown) => e);
    await c.close();
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({ code: 'no_fleet', action: 'transient' });
    expect((err as Error).message).toMatch(/no Sluice fleet under prefix "nofleet1" at 127\.0\.0\.1:\d+/);
    expect((err as Error).message).toMatch(/redis\.prefix/);
    expect(await keysUnder('nofleet1')).toEqual([]);
  });

  it('a fleet of another store schema: fleet_incompatible naming both releases, nothing written', async () => {
    const prefix = 'future1';
    const future = createHeartbeat({
      redis,
      keys: createKeys(prefix),
      role: 'scheduler',
      release: { version: '9.0.0', schema: SCHEMA_VERSION + 1 },
    });
    await future.start();
    const c = client(prefix);
    const err = await c.send({ ...message, to: 'a@accept.test' }).catch((e: unknown) => e);
    await c.close();
    await future.close();
    expect(err).toMatchObject({ code: 'fleet_incompatible', action: 'permanent' });
    expect((err as Error).message).toContain(
      `speaks store schema ${SCHEMA_VERSION + 1} (Sluice 9.0.0); this client (Sluice ${SLUICE_VERSION}) speaks schema ${SCHEMA_VERSION}`,
    );
    expect((await keysUnder(prefix)).filter((k) => !k.includes(':fleet}'))).toEqual([]);
  });

  it("fleetCheck: 'warn' reports it and accepts; mail accepted with no scheduler is counted, then sent once one starts", async () => {
    const f = fleet();
    const warnings: SluiceError[] = [];
    const c = client(f.prefix, { fleetCheck: 'warn', onWarning: (w) => warnings.push(w) });
    const { id } = await c.send({ ...message, to: 'early@accept.test' });
    await c.sendBulk([
      { ...message, to: 'early2@accept.test' },
      { ...message, to: 'early3@accept.test' },
    ]);
    expect(warnings.map((w) => w.code)).toEqual(['no_fleet', 'no_scheduler']);
    const before = await waitFor(async () => (await readFleet(redis, createKeys(f.prefix))).unscheduled, 5_000);
    expect(before.count).toBe(3);

    const scheduler = await f.startScheduler();
    await f.startWorker();
    expect(scheduler.output()).toContain('3 messages were accepted while no scheduler ran');
    await waitFor(async () => (await c.messages.status(id))?.state === 'sent', 20_000, 'the early message sent');
    await waitFor(() => f.sandbox.accepted().length === 3, 20_000, 'three arrivals');
    const after = await c.fleet();
    await c.close();
    expect(after.unscheduled).toBeNull();
    expect(after.alive).toMatchObject({ scheduler: 1, worker: 1 });
    expect(after.processes.map((p) => [p.role, p.version, p.schema])).toEqual([
      ['scheduler', SLUICE_VERSION, SCHEMA_VERSION],
      ['worker', SLUICE_VERSION, SCHEMA_VERSION],
    ]);
    // The built-in provider is the sandbox, and the fleet says so.
    expect(after.sandbox).toEqual(['ses']);
  });

  it('with the fleet running, a new client sends without a warning; a stopped process leaves the fleet at once', async () => {
    const f = fleet();
    const warnings: SluiceError[] = [];
    const c = client(f.prefix, { onWarning: (w) => warnings.push(w) });
    await c.send({ ...message, to: 'later@accept.test' });
    expect(warnings).toEqual([]);
    const worker = f.processes.find((p) => p.name.startsWith('worker'))!;
    await worker.stop();
    expect((await c.fleet()).alive.worker).toBe(0);
    await c.close();
  });
});
