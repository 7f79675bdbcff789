import { startFleet, waitFor, type Fleet } from '../support/fleet.js';
import { warmUp } from './support.js';
import { BLOCKING, RELAY, STORM } from '../support/scenarios.js';

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
    scenario: { domains: BLOCKING.domains },
    config: {
      ...RELAY,
      receivers: BLOCKING.receivers,
      governor: { ...BLOCKING.governor, rules: [BLOCKING.rule] },
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
    scenario: { domains: STORM.domains },
    config: {
      ...RELAY,
      receivers: STORM.receivers,
      delivery: { retry: { throttled: STORM.throttledRetry } },
      backpressure: STORM.backpressure,
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
