import { afterEach, expect, it } from 'vitest';
import { parseConfig, parseMessage } from '@sluice/core';
import { createStatus, explain } from '@sluice/ops';
import {
  createCampaigns,
  createLaunchStore,
  createQueues,
  createStore,
  messageId,
  type LaunchDecision,
  type LaunchRecord,
} from '@sluice/store';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

// What `explain` and the status snapshot (the dashboard's data) say of a campaign's launch.
// The decision is written as the governor leader writes it (its chore is tested in
// packages/dispatch/test/launch.test.ts with a real scheduler).
const r = useRedisPrefix();
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

function decision(over: Partial<LaunchDecision>): LaunchDecision {
  const now = Date.now();
  return {
    kind: 'accept',
    rule: 'fits',
    reason: 'every receiver finishes in time',
    decidedAt: now,
    decidedBy: 'scheduler-1',
    approval: 'not-needed',
    startAt: now,
    deadline: now + 3_600_000,
    shared: { limit: 'provider', key: 'ses', rate: 100, detail: '100/s' },
    receivers: [],
    receiverCount: 0,
    checks: {
      storage: { usedBytes: 1, budgetBytes: 100, share: 0.01, source: 'budget' },
      feed: {},
      circuits: { share: 0, receivers: [] },
    },
    ...over,
  };
}

async function setup(id: string, d: LaunchDecision, stopped: LaunchRecord['stopped'] = {}) {
  const { redis, keys } = r;
  const config = parseConfig({
    redis: { url: r.url, prefix: r.prefix },
    providers: { ses: { kind: 'ses', sandbox: true, rate: 100 } },
  });
  const queues = createQueues({ redis, keys });
  open.push(queues);
  await createCampaigns({ redis, keys, queues }).create({ id });
  const record: LaunchRecord = {
    campaignId: id,
    requestedAt: Date.now(),
    requestedBy: 'ana',
    stream: 'transactional',
    forecast: { total: 10, domains: { 'gmail.com': 5, 'yahoo.com': 5 } },
    decision: d,
    stopped,
  };
  expect(await createLaunchStore(redis, keys).write(id, 0, record)).toBe(true);
  const store = createStore({ redis, keys });
  const message = async (to: string): Promise<string> => {
    const m = {
      ...parseMessage({ from: 'a@acme.test', to, subject: 's', text: 't', campaignId: id }),
      id: messageId('default'),
      acceptedAt: Date.now(),
    };
    await store.accept(m);
    return m.id;
  };
  return { config, message };
}

it('explains a message of a held launch as held, and shows the launch in the status', async () => {
  const untilMs = Date.now() + 60_000;
  const { config, message } = await setup(
    'held',
    decision({ kind: 'held', rule: 'circuit', untilMs, reason: 'open circuits at yahoo cover 50.0% of the forecast' }),
  );
  const e = await explain({ config, redis: r.redis, keys: r.keys }, await message('ann@gmail.com'));
  expect(e.summary).toContain(
    `its campaign's launch holds new recipients back until ${new Date(untilMs).toISOString()}: open circuits at yahoo`,
  );
  expect(e.launch).toBeDefined();
  const status = createStatus({ config, redis: r.redis, keys: r.keys });
  open.push(status);
  const s = await status.snapshot();
  expect(s.campaigns.find((c) => c.id === 'held')?.launch).toEqual({
    kind: 'held',
    rule: 'circuit',
    reason: 'open circuits at yahoo cover 50.0% of the forecast',
    approval: 'not-needed',
    untilMs,
    stopped: [],
  });
});

it('explains a message to a receiver the re-check stopped, and not one to another receiver', async () => {
  const { config, message } = await setup('cut', decision({}), {
    yahoo: { reason: 'projected to finish after the deadline', at: Date.now(), domains: ['yahoo.com'] },
  });
  const deps = { config, redis: r.redis, keys: r.keys };
  const stopped = await explain(deps, await message('bo@yahoo.com'));
  expect(stopped.summary).toContain(
    "its campaign's launch stopped this receiver (receiver yahoo stopped: projected to finish after the deadline)",
  );
  const other = await explain(deps, await message('cy@gmail.com'));
  expect(other.launch).toBeUndefined();
  expect(other.summary).not.toContain('launch');
});
