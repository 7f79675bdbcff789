import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKeys, type MessageInput } from '@sluice/core';
import { createClient, type SluiceClient } from '@sluice/client';
import { freePort } from '../../../test/support/redis-server.js';

// Redis of the test's own, stopped (SIGSTOP: connections stay open and nothing answers) and
// killed (connections refused) under a client, then brought back on the same port.

const ok: MessageInput = { from: 'Acme <hello@acme.test>', to: 'someone@example.test', subject: 'Hi', text: 'Hello' };
const prefix = 'outage';
/** Wide: the deadline is 300 ms; a call that waits for Redis to come back (seconds) crosses it. */
const GUARD_RAIL_MS = 2_500;

let port: number;
let dir: string;
let server: ChildProcess | undefined;

async function startServer(): Promise<void> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  server = child;
}

async function killServer(): Promise<void> {
  const child = server;
  server = undefined;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGCONT'); // a stopped server must run to die
  child.kill('SIGKILL');
  await exited;
}

/** How a call ended, and after how long. */
async function outcome(call: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const start = Date.now();
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: Date.now() - start };
}

/** Sends until one succeeds (the client reconnects with back-off), at most `ms`. */
async function sendOnceBack(client: SluiceClient, message: MessageInput, ms: number): Promise<{ id: string }> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await client.send(message);
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const unavailable = { name: 'SluiceError', code: 'redis_unavailable', action: 'transient' };

beforeAll(async () => {
  port = await freePort();
  dir = mkdtempSync(join(tmpdir(), 'sluice-outage-'));
  await startServer();
});
afterEach(async () => {
  if (!server) await startServer();
});
afterAll(async () => {
  await killServer();
  rmSync(dir, { recursive: true, force: true });
});

describe('Redis stopped (SIGSTOP): nothing answers, the connection stays open', () => {
  it('every call fails with redis_unavailable at the deadline; once Redis runs again sends work, and a retry with the same key is not a second message', async () => {
    const client = createClient({ redis: `redis://127.0.0.1:${port}`, prefix, fleetCheck: 'off', timeoutMs: 300 });
    const check = new Redis(`redis://127.0.0.1:${port}`);
    try {
      await client.campaigns.create({ id: 'spring' });
      server!.kill('SIGSTOP');
      const keyed = { ...ok, idempotencyKey: 'order-7' };
      const calls: [string, () => Promise<unknown>][] = [
        ['send', () => client.send(keyed)],
        ['sendBulk', () => client.sendBulk([ok, { ...ok, campaignId: 'spring' }])],
        ['messages.status', () => client.messages.status('m1')],
        ['campaigns.status', () => client.campaigns.status('spring')],
        ['suppressions.get', () => client.suppressions.get('default', 'a@example.test')],
      ];
      for (const [what, call] of calls) {
        const { error, ms } = await outcome(call);
        expect(error, what).toMatchObject(unavailable);
        expect((error as Error).message).toMatch(
          new RegExp(`^${what}: Redis is unavailable \\(no answer within 300 ms\\)`),
        );
        expect((error as Error).message).toMatch(/retry it with the same idempotencyKey/);
        expect(ms, what).toBeLessThan(GUARD_RAIL_MS);
      }
      server!.kill('SIGCONT');
      const again = await sendOnceBack(client, keyed, 10_000);
      expect(await client.messages.status(again.id)).toMatchObject({ state: 'queued' });
      // The send that failed at its deadline and its retry are one message, one job.
      const queue = `${prefix}:${createKeys(prefix).intakeQueue('normal')}`;
      expect(await check.exists(`${queue}:${again.id}`)).toBe(1);
      expect(await check.keys(`${prefix}:*msg:*`)).toEqual([createKeys(prefix).message(again.id)]);
    } finally {
      server?.kill('SIGCONT');
      await client.close();
      check.disconnect();
    }
  });

  it('close() does not hang on a silent Redis', async () => {
    const client = createClient({ redis: `redis://127.0.0.1:${port}`, prefix, fleetCheck: 'off', timeoutMs: 300 });
    await client.send(ok);
    server!.kill('SIGSTOP');
    try {
      const { error, ms } = await outcome(() => client.close());
      expect(error).toBeUndefined();
      expect(ms).toBeLessThan(GUARD_RAIL_MS);
    } finally {
      server!.kill('SIGCONT');
    }
  });
});

describe('Redis killed (connection refused) and restarted', () => {
  it('sends fail with redis_unavailable, not ioredis’s error, within the deadline even on a connection that retries for ever; they work again once Redis is back', async () => {
    const own = createClient({ redis: `redis://127.0.0.1:${port}`, prefix, fleetCheck: 'off', timeoutMs: 300 });
    // A connection of the backend's that never gives up a command (as BullMQ asks for workers).
    const patient = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: null });
    patient.on('error', () => {});
    const theirs = createClient({ redis: patient, prefix, fleetCheck: 'off', timeoutMs: 300 });
    // What the library prints in the backend's process: nothing (BullMQ printed each
    // reconnect error of every queue handle, ioredis each unhandled error event).
    const printed = vi.spyOn(console, 'error');
    try {
      await own.send(ok);
      await theirs.send(ok);
      await killServer();
      for (const [what, client] of [
        ['own connection', own],
        ['backend’s connection', theirs],
      ] as const) {
        const { error, ms } = await outcome(() => client.send(ok));
        expect(error, what).toMatchObject(unavailable);
        expect((error as Error).message, what).toMatch(/^send: Redis is unavailable/);
        expect(ms, what).toBeLessThan(GUARD_RAIL_MS);
      }
      await startServer();
      for (const client of [own, theirs]) {
        const { id } = await sendOnceBack(client, ok, 10_000);
        expect(await client.messages.status(id)).toMatchObject({ state: 'queued' });
      }
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
      await own.close();
      await theirs.close();
      patient.disconnect();
    }
  });
});
