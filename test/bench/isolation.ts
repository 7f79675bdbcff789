import { startFleet, waitFor, type Fleet } from '../support/fleet.js';
import { warmUp } from './support.js';

/** One receiver's time to take a batch alone, and again while another receiver is in trouble. */
export interface IsolationRun {
  aloneSeconds: number;
  withTroubleSeconds: number;
}

/** Figures of the isolation scenarios (the fleet tests' circuits and 421 storm, measured). */
export interface IsolationFigures {
  block: IsolationRun;
  storm: IsolationRun & { attemptsPerStormRecipient: number };
  messages: number;
}

const base = { from: 'bench@acme.test', subject: 'bench', text: 'hello' };
const batch = (domain: string, n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({ ...base, to: `${tag}${i}@${domain}` }));

/** Seconds from the first to the last arrival of a tag's batch at a domain, once all `n` arrived. */
async function spanOf(fleet: Fleet, domain: string, tag: string, n: number): Promise<number> {
  const times = () =>
    fleet.sandbox
      .accepted()
      .filter((a) => a.domain === domain && a.to[0]!.startsWith(tag))
      .map((a) => a.arrivedAt);
  await waitFor(() => times().length >= n, 120_000, `${n} arrivals of ${tag} at ${domain}`);
  const t = times();
  return (Math.max(...t) - Math.min(...t)) / 1000;
}

/**
 * A receiver's pace while another receiver blocks everything (its circuit opens) and while another
 * answers a sustained 421 storm: each against the same receiver alone, in the same run. Target:
 * at most 25% slower (+0.2 s).
 */
export async function benchIsolation(redisUrl: string, messages: number): Promise<IsolationFigures> {
  const blockFleet = await startFleet({
    redisUrl,
    schedulers: 1,
    workers: 2,
    scenario: { domains: { 'blocked.test': { block: ['*@blocked.test'] }, 'fine.test': {} } },
    config: {
      defaultProvider: 'relay',
      providers: { relay: { kind: 'smtp', rate: 200, burst: 20, concurrency: 16 } },
      receivers: [
        { name: 'blocked', domains: ['blocked.test'], rate: 30, burst: 6 },
        { name: 'fine', domains: ['fine.test'], rate: 30, burst: 6 },
      ],
      governor: {
        intervalMs: 250,
        evidenceMs: 200,
        rules: [
          {
            id: 'blocks',
            signal: 'rejected:policy_block',
            over: 'attempted',
            above: 0.5,
            minVolume: 10,
            scope: 'circuit',
            open: { openForMs: 60_000, probes: 2 },
          },
        ],
      },
    },
  });
  let block: IsolationRun;
  try {
    await warmUp(blockFleet);
    await blockFleet.client.sendBulk(batch('fine.test', messages, 'a'));
    const aloneSeconds = await spanOf(blockFleet, 'fine.test', 'a', messages);
    await blockFleet.client.sendBulk(batch('blocked.test', messages, 'x'));
    await blockFleet.client.sendBulk(batch('fine.test', messages, 'b'));
    block = { aloneSeconds, withTroubleSeconds: await spanOf(blockFleet, 'fine.test', 'b', messages) };
  } finally {
    await blockFleet.stop();
  }

  const stormFleet = await startFleet({
    redisUrl,
    schedulers: 1,
    workers: 2,
    // Takes 10/s; Sluice was told 40/s: above that it answers Gmail's 421 4.7.28.
    scenario: { domains: { 'storm.test': { rate: 10, burst: 3 }, 'calm.test': {} } },
    config: {
      defaultProvider: 'relay',
      providers: { relay: { kind: 'smtp', rate: 200, burst: 20, concurrency: 16 } },
      receivers: [
        { name: 'storm', domains: ['storm.test'], rate: 40, burst: 8 },
        { name: 'calm', domains: ['calm.test'], rate: 40, burst: 8 },
      ],
      delivery: { retry: { throttled: { baseMs: 500, maxMs: 5_000 } } },
      backpressure: { cooldownMs: 500, holdMs: 20_000 },
    },
  });
  try {
    await warmUp(stormFleet);
    await stormFleet.client.sendBulk(batch('calm.test', messages, 'a'));
    const aloneSeconds = await spanOf(stormFleet, 'calm.test', 'a', messages);
    const mixed = [...batch('storm.test', messages, 's'), ...batch('calm.test', messages, 'b')].sort(
      () => Math.random() - 0.5,
    );
    await stormFleet.client.sendBulk(mixed);
    const withTroubleSeconds = await spanOf(stormFleet, 'calm.test', 'b', messages);
    await spanOf(stormFleet, 'storm.test', 's', messages);
    const storm = stormFleet.sandbox.stats().byDomain['storm.test']!;
    return {
      block,
      storm: {
        aloneSeconds,
        withTroubleSeconds,
        attemptsPerStormRecipient: (storm.accepted + storm.throttled) / messages,
      },
      messages,
    };
  } finally {
    await stormFleet.stop();
  }
}
