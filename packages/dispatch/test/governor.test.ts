import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, type Clock, type Keys } from '@sluice/core';
import { createGovernor, replyMatcher, type Governor, type GovernorDecision } from '@sluice/dispatch';
import { createAdjustments, createSignals, type Adjustments, type Signals } from '@sluice/throttle';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';

const r = useRedisPrefix();
let redis: Redis;
let keys: Keys;
const open: { close(): unknown }[] = [];

/**
 * The time every part of a test reads (signals, adjustments, governor): the test steps it.
 * It starts on a bucket boundary, so a window's buckets are the same on every run.
 */
let now: number;
const clock: Clock = () => now;
const step = (ms: number): void => void (now += ms);

beforeEach(() => {
  redis = r.redis;
  keys = r.keys;
  now = 1_800_000_000_000;
});
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const config = parseConfig({
  governor: { cooldownMs: 300, evidenceMs: 100, recovery: { step: 0.1, everyMs: 300 } },
});

interface Setup {
  governor: Governor;
  signals: Signals;
  adjustments: Adjustments;
  paused: string[];
  resumed: string[];
}
function setup(holder = 'a', cfg = config, bucketMs = 100): Setup {
  const signals = createSignals({ redis, keys, bucketMs, flushMs: 60_000, clock });
  const adjustments = createAdjustments({ redis, keys, backpressure: cfg.backpressure, clock });
  const paused: string[] = [];
  const resumed: string[] = [];
  const governor = createGovernor({
    config: cfg,
    redis,
    keys,
    adjustments,
    signals,
    logger: pino({ level: 'silent' }),
    holder,
    pauseCampaign: async (id) => void paused.push(id),
    resumeCampaign: async (id) => void resumed.push(id),
    campaignClass: async (id) => (await redis.hget(keys.campaign(id), 'priority')) ?? undefined,
    clock,
  });
  open.push(governor, signals, { close: () => adjustments.close() });
  return { governor, signals, adjustments, paused, resumed };
}
const logged = async (): Promise<GovernorDecision[]> =>
  (await redis.xrange(keys.governorLog(), '-', '+')).map(([, fields]) => JSON.parse(fields[1]!) as GovernorDecision);

describe('the governor', () => {
  it('cuts a receiver with soft bounces over 3%, logs why, then recovers it step by step', async () => {
    const { governor, signals, adjustments } = setup();
    const yahoo = { kind: 'receiver', name: 'yahoo' } as const;
    signals.record([yahoo], 'attempted', 300);
    signals.record([yahoo], 'bounced_soft', 15);
    await signals.flush();
    const [cut] = await governor.tick();
    expect(cut).toMatchObject({
      rule: 'soft-bounces',
      version: config.governor.version,
      scope: 'receiver',
      name: 'yahoo',
      action: 'lower',
      from: 1,
      to: 0.7,
    });
    expect(cut!.inputs).toMatchObject({
      signal: 'bounced_soft',
      count: 15,
      over: 'attempted',
      volume: 300,
      ratio: 0.05,
    });
    expect(adjustments.factor(keys.bucket('receiver', 'yahoo'))).toBeCloseTo(0.7);
    expect(await logged()).toEqual([cut]);

    // Within the cool-down nothing more happens, whatever the signals.
    signals.record([yahoo], 'attempted', 300);
    signals.record([yahoo], 'bounced_soft', 30);
    await signals.flush();
    expect(await governor.tick()).toEqual([]);

    // Calm once the cut has had its cool-down (what came before it does not count): additive
    // recovery, a tenth of the rate it was cut to a step, steady while below where the
    // trouble was. (Judged on whole 100 ms buckets that began after the cool-down: 300 ms,
    // then up to a bucket, then 100 ms of evidence: not before 400 ms.)
    step(399);
    signals.record([yahoo], 'attempted', 300);
    await signals.flush();
    expect(await governor.tick()).toEqual([]);
    step(1);
    expect(await governor.tick()).toMatchObject([{ rule: 'recovery', action: 'restore', from: 0.7, to: 0.77 }]);
    // The next step a recovery period (300 ms) later, not before.
    step(299);
    expect(await governor.tick()).toEqual([]);
    step(1);
    expect(await governor.tick()).toMatchObject([{ rule: 'recovery', from: 0.77, to: 0.84 }]);
  });

  it('does not act on a ratio below its minimum volume', async () => {
    const { governor, signals } = setup();
    const small = { kind: 'receiver', name: 'tiny.test' } as const;
    signals.record([small], 'attempted', 50);
    signals.record([small], 'bounced_soft', 20);
    await signals.flush();
    expect(await governor.tick()).toEqual([]);
  });

  it('halves a campaign with complaints over 0.1% and pauses its low traffic, then resumes it', async () => {
    const cfg = parseConfig({
      governor: {
        evidenceMs: 100,
        rules: [
          {
            id: 'complaints',
            signal: 'complained',
            over: 'accepted',
            above: 0.001,
            minVolume: 1000,
            scope: 'campaign',
            multiply: 0.5,
            pause: ['normal', 'low'],
            forMs: 300,
          },
        ],
      },
    });
    const { governor, signals, adjustments, paused, resumed } = setup('a', cfg);
    await redis.hset(keys.campaign('spring'), 'priority', 'low');
    await redis.hset(keys.campaign('receipts'), 'priority', 'high');
    const spring = { kind: 'campaign', name: 'spring' } as const;
    const receipts = { kind: 'campaign', name: 'receipts' } as const;
    signals.record([spring, receipts], 'accepted', 2000);
    signals.record([spring, receipts], 'complained', 5);
    await signals.flush();
    const decisions = await governor.tick();
    expect(decisions.map((d) => `${d.name} ${d.action}`).sort()).toEqual([
      'receipts lower',
      'spring lower',
      'spring pause',
    ]);
    expect(paused).toEqual(['spring']); // a high-class campaign is slowed, not paused
    expect(adjustments.factor(keys.bucket('campaign', 'spring'))).toBeCloseTo(0.5);
    // Paused for forMs (300 ms), to the millisecond.
    step(299);
    expect((await governor.tick()).filter((d) => d.action === 'resume')).toEqual([]);
    step(1);
    expect((await governor.tick()).filter((d) => d.action === 'resume')).toMatchObject([
      { name: 'spring', rule: 'complaints' },
    ]);
    expect(resumed).toEqual(['spring']);
  });

  it('acts in one scheduler at a time', async () => {
    const a = setup('a');
    const b = setup('b');
    const sg = { kind: 'provider', name: 'sg' } as const;
    a.signals.record([sg], 'attempted', 200);
    a.signals.record([sg], 'throttled', 40);
    await a.signals.flush();
    const [first, second] = await Promise.all([a.governor.tick(), b.governor.tick()]);
    expect([first.length, second.length].sort()).toEqual([0, 1]);
    expect((await logged()).filter((d) => d.rule === 'provider-throttling')).toHaveLength(1);
    // The one that acted says it leads (its /metrics serves the fleet's figures), the other not.
    expect([a.governor.leading, b.governor.leading]).toEqual([first.length === 1, second.length === 1]);
  });

  it('refuses a rule without a trigger or an action, naming the field', () => {
    expect(() =>
      parseConfig({ governor: { rules: [{ id: 'x', signal: 'complained', scope: 'campaign', multiply: 0.5 }] } }),
    ).toThrow(/governor\.rules\.0\.above: a rule needs exactly one trigger/);
    expect(() =>
      parseConfig({ governor: { rules: [{ id: 'x', signal: 'complained', atLeast: 1, scope: 'receiver' }] } }),
    ).toThrow(/governor\.rules\.0\.multiply: a rule needs an action/);
    expect(() =>
      parseConfig({
        governor: { rules: [{ id: 'x', signal: 'nonsense', atLeast: 1, scope: 'receiver', multiply: 0.5 }] },
      }),
    ).toThrow(/governor\.rules\.0\.signal/);
  });
});

describe('an alert rule', () => {
  it('reports a receiver whose replies it cannot read past 5% of 100 attempts, once per cool-down, and slows nothing', async () => {
    const { governor, signals, adjustments } = setup();
    const acme = { kind: 'receiver', name: 'acme' } as const;
    // 4 of 120: under the line; then 8 of 120 more: 12 of 240 is 5%, still not over it.
    signals.record([acme], 'attempted', 120);
    signals.record([acme], 'deferred:unknown', 4);
    await signals.flush();
    expect(await governor.tick()).toEqual([]);
    step(100);
    signals.record([acme], 'attempted', 120);
    signals.record([acme], 'deferred:unknown', 8);
    await signals.flush();
    expect(await governor.tick()).toEqual([]);
    step(100);
    signals.record([acme], 'attempted', 60);
    signals.record([acme], 'deferred:unknown', 10);
    await signals.flush();
    const [alert] = await governor.tick();
    expect(alert).toMatchObject({
      rule: 'unknown-replies',
      scope: 'receiver',
      name: 'acme',
      action: 'alert',
      from: 1,
      to: 1,
    });
    expect(alert!.inputs).toMatchObject({ signal: 'deferred:unknown', count: 22, over: 'attempted', volume: 300 });
    expect(adjustments.factor(keys.bucket('receiver', 'acme'))).toBe(1);
    expect(await logged()).toEqual([alert]);
    // Once per cool-down, however long it goes on.
    step(100);
    expect(await governor.tick()).toEqual([]);
    step(config.governor.cooldownMs);
    expect(await governor.tick()).toMatchObject([{ rule: 'unknown-replies', action: 'alert', name: 'acme' }]);
  });

  it('only alerts, on a layer key, named in the error', () => {
    const rule = {
      id: 'x',
      signal: 'deferred:unknown',
      over: 'attempted',
      above: 0.05,
      scope: 'receiver',
      alert: true,
    };
    expect(() => parseConfig({ governor: { rules: [{ ...rule, multiply: 0.5 }] } })).toThrow(
      /governor\.rules\.0\.alert.*only alerts/s,
    );
    expect(() => parseConfig({ governor: { rules: [{ ...rule, scope: 'circuit', open: {} }] } })).toThrow(
      /governor\.rules\.0\.alert: an alert rule only alerts/,
    );
  });
});

describe('a rule that matches replies', () => {
  const cfg = parseConfig({
    governor: {
      evidenceMs: 50,
      recovery: { step: 0.5, everyMs: 50 },
      rules: [
        {
          id: 'spamhaus',
          signal: 'matched',
          match: { codes: ['5.7'], text: 'spamhaus' },
          atLeast: 2,
          scope: 'receiver',
          multiply: 0.5,
          forMs: 400,
          cooldownMs: 50,
        },
      ],
    },
  });

  it('counts only the replies its match describes (enhanced code prefix and text), and holds its cut for forMs', async () => {
    const matches = replyMatcher(cfg.governor.rules);
    expect(
      matches({
        reply: '554 5.7.1 Service unavailable; Client host [1.2.3.4] blocked using zen.spamhaus.org',
        family: 'policy_block',
        enhanced: '5.7.1',
      }),
    ).toEqual(['spamhaus']);
    expect(matches({ reply: '550 5.7.1 Message rejected as spam', family: 'policy_block', enhanced: '5.7.1' })).toEqual(
      [],
    ); // no Spamhaus
    expect(
      matches({ reply: '451 4.7.1 listed at Spamhaus, try later', family: 'throttled', enhanced: '4.7.1' }),
    ).toEqual([]); // 4.7, not 5.7
    expect(matches({ reply: 'spamhaus said no' })).toEqual([]); // no enhanced code at all

    const { governor, signals, adjustments } = setup('a', cfg);
    const corp = { kind: 'receiver', name: 'corp' } as const;
    signals.record([corp], 'attempted', 100);
    signals.record([corp], 'rejected:policy_block', 50);
    signals.record([corp], 'matched:spamhaus', 1);
    await signals.flush();
    expect(await governor.tick()).toEqual([]); // one is not two
    signals.record([corp], 'matched:spamhaus', 1);
    await signals.flush();
    expect(await governor.tick()).toMatchObject([
      { rule: 'spamhaus', action: 'lower', to: 0.5, inputs: { signal: 'matched', count: 2 } },
    ]);
    // Calm at once, but the cut holds for 400 ms before recovery starts.
    step(200);
    expect(await governor.tick()).toEqual([]);
    step(199);
    expect(await governor.tick()).toEqual([]);
    step(1);
    expect(await governor.tick()).toMatchObject([{ rule: 'recovery', from: 0.5 }]);
    expect(adjustments.factor(keys.bucket('receiver', 'corp'))).toBeGreaterThan(0.5);
  });

  it('needs match with signal "matched" and a valid pattern, named in the error', () => {
    const rule = { id: 'x', atLeast: 1, scope: 'receiver', multiply: 0.5 };
    expect(() => parseConfig({ governor: { rules: [{ ...rule, signal: 'matched' }] } })).toThrow(
      /governor\.rules\.0\.match: signal "matched"/,
    );
    expect(() => parseConfig({ governor: { rules: [{ ...rule, signal: 'matched', match: { text: '(' } }] } })).toThrow(
      /governor\.rules\.0\.match\.text: must be a valid regular expression/,
    );
    expect(() =>
      parseConfig({ governor: { rules: [{ ...rule, signal: 'matched', match: { codes: ['5.7.x'] } }] } }),
    ).toThrow(/governor\.rules\.0\.match\.codes\.0: must be an enhanced code/);
  });
});

describe('a proportional rule', () => {
  it('cuts a receiver to just under the share that got through, judging only what followed its last cut', async () => {
    const cfg = parseConfig({
      receivers: [{ name: 'slow', domains: ['slow.test'], rate: 160 }],
      governor: {
        evidenceMs: 100,
        recovery: { step: 0.1, everyMs: 100 },
        rules: [
          {
            id: 'receiver-throttling',
            signal: 'throttled',
            over: 'attempted',
            above: 0.02,
            minVolume: 20,
            windowMs: 3_000,
            scope: 'receiver',
            proportional: true,
            cooldownMs: 100,
          },
        ],
      },
    });
    const { governor, signals, adjustments } = setup('a', cfg);
    const slow = { kind: 'receiver', name: 'slow' } as const;
    const key = keys.bucket('receiver', 'slow');
    signals.record([slow], 'attempted', 80);
    signals.record([slow], 'throttled', 40);
    await signals.flush();
    const [cut] = await governor.tick();
    // Half refused: to half of what was sent, less 3%.
    expect(cut).toMatchObject({ rule: 'receiver-throttling', action: 'lower', from: 1, to: 0.485 });
    expect(adjustments.factor(key)).toBe(0.485);

    // What came before the cut is not judged again; what followed it is, in proportion to
    // the factor in effect (a tenth refused: 0.485 × 0.9 × 0.97).
    step(350);
    expect(await governor.tick()).toMatchObject([{ rule: 'recovery', from: 0.485 }]);
    signals.record([slow], 'attempted', 100);
    signals.record([slow], 'throttled', 10);
    await signals.flush();
    const [again] = await governor.tick();
    expect(again).toMatchObject({
      action: 'lower',
      to: Number((adjustments.governed(key)!.from * 0.9 * 0.97).toFixed(4)),
    });
  });

  it('climbs back steadily below where the trouble was, and faster beyond it', async () => {
    const cfg = parseConfig({ governor: { evidenceMs: 50, cooldownMs: 50, recovery: { step: 0.1, everyMs: 100 } } });
    const { governor, adjustments } = setup('a', cfg);
    const key = keys.bucket('receiver', 'r');
    await adjustments.setGoverned(key, 0.5, 'soft-bounces', 0.6);
    const steps: number[] = [];
    for (let i = 0; i < 6; i++) {
      step(110);
      const [d] = await governor.tick();
      steps.push(Number((d!.to - d!.from).toFixed(4)));
    }
    // 0.05 a step (a tenth of 0.5) up to 0.6, then growing with every step since the cut.
    expect(steps.slice(0, 2)).toEqual([0.05, 0.05]);
    for (let i = 3; i < steps.length; i++) expect(steps[i]!).toBeGreaterThan(steps[i - 1]!);
  });
});

describe('a circuit rule', () => {
  it('opens the circuit, reopens it for twice as long on failed probes, and closes it gradually', async () => {
    const cfg = parseConfig({
      governor: {
        evidenceMs: 50,
        rules: [
          {
            id: 'blocks',
            signal: 'rejected:policy_block',
            over: 'attempted',
            above: 0.5,
            minVolume: 10,
            scope: 'circuit',
            open: { openForMs: 200, probes: 2 },
          },
        ],
      },
    });
    const { governor, signals, adjustments } = setup('a', cfg);
    const circuit = { kind: 'circuit', name: 'blocked.test|default|transactional' } as const;
    signals.record([circuit], 'attempted', 12);
    signals.record([circuit], 'rejected:policy_block', 12);
    await signals.flush();
    expect(await governor.tick()).toMatchObject([
      { rule: 'blocks', scope: 'circuit', name: circuit.name, action: 'open' },
    ]);
    expect(adjustments.circuit(circuit.name)).toMatchObject({ openForMs: 200, probes: 2 });

    // Open: nothing to judge until the probes have gone.
    step(250);
    signals.record([circuit], 'attempted', 2);
    signals.record([circuit], 'rejected:policy_block', 2);
    await signals.flush();
    expect(await governor.tick()).toMatchObject([{ action: 'open' }]);
    expect(adjustments.circuit(circuit.name)).toMatchObject({ openForMs: 400 });

    // The probes get through: closed, the receiver restarting at a quarter of its rate.
    step(450);
    signals.record([circuit], 'attempted', 2);
    signals.record([circuit], 'accepted', 2);
    await signals.flush();
    expect(await governor.tick()).toMatchObject([{ action: 'close' }]);
    expect(adjustments.circuit(circuit.name)).toBeUndefined();
    expect(adjustments.factor(keys.bucket('receiver', 'blocked.test'))).toBe(0.25);
  });

  it('is only a circuit rule’s to open, named in the error', () => {
    expect(() =>
      parseConfig({ governor: { rules: [{ id: 'x', signal: 'rejected', atLeast: 1, scope: 'receiver', open: {} }] } }),
    ).toThrow(/governor\.rules\.0\.open/);
    expect(() =>
      parseConfig({
        governor: { rules: [{ id: 'x', signal: 'rejected', atLeast: 1, scope: 'circuit', multiply: 0.5 }] },
      }),
    ).toThrow(/governor\.rules\.0\.open/);
  });
});
