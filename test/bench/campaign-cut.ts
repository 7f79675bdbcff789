import { OTHER_DOMAINS, SLOW_DOMAIN, prepareCampaign } from '../support/campaign-recipients.js';
import { waitFor } from '../support/fleet.js';
import { startProducer } from '../support/producer-process.js';
import { UNLIMITED, withFleet } from './campaign-run.js';
import { warmUp } from './support.js';

/** Figures of a campaign whose largest receiver (30% of it) is cut to a tenth of the others' rate. */
export interface CutRun {
  /** Each other receiver's limit, recipients per second (the cut one has a tenth). */
  perReceiverRate: number;
  maxWindow: number;
  /** The other receivers' arrivals per second over their limits' sum, until the window bound. */
  othersShare: number;
  /** The cut receiver's, over its own limit, in the same span. */
  cutShare: number;
  /** From the first arrival to the window bound (the cut receiver's backlog fills the window). */
  secondsToBound: number;
  /** The most recipients pending (accepted, not final) seen, every poll: at most `maxWindow` and a chunk. */
  peakPending: number;
}

const CHUNK = 500;

/**
 * The "one receiver holding 30% of the list cut to a tenth": seven receivers at
 * `perReceiverRate` each (10% of the list each) and `slow.test` at a tenth of it (30%), no
 * reserve kept for other classes, every other quota far above. The cut receiver's backlog
 * fills the window; until it is full, the others must keep ≥ 90% of their allowed rate.
 */
export async function runCut(options: { perReceiverRate: number; maxWindow: number }): Promise<CutRun> {
  const r = options.perReceiverRate;
  const receivers = [
    { name: 'slow', domains: [SLOW_DOMAIN], rate: r / 10, burst: Math.max(1, Math.round(r / 100)) },
    ...OTHER_DOMAINS.map((d, i) => ({ name: `o${i}`, domains: [d], rate: r, burst: Math.max(1, Math.round(r / 10)) })),
  ];
  const config = {
    ...UNLIMITED,
    receivers,
    reserves: { critical: 0, high: 0 },
    injection: { aheadMs: 20_000, minWindow: Math.min(2_000, options.maxWindow), maxWindow: options.maxWindow },
  };
  return withFleet({ workers: 2, config }, async (fleet, _redis, url) => {
    const id = 'cut';
    await warmUp(fleet);
    // Enough that the window fills long before the list ends.
    const count = Math.ceil((options.maxWindow / 0.3) * 2);
    await prepareCampaign(fleet.client, id, { mix: 'slow30', recipientCount: count });
    const producer = await startProducer(fleet, {
      redisUrl: url,
      campaignId: id,
      mix: 'slow30',
      count,
      chunkSize: CHUNK,
    });
    try {
      const firstAt = await waitFor(
        () => fleet.sandbox.accepted().find((a) => a.sluiceId?.startsWith(`${id}_`))?.arrivedAt,
        60_000,
        'the first arrival',
      );
      // The bound: the cut receiver's backlog fills the window, so the others have less than
      // a second of theirs left in it (each recipient's domain is known from its position).
      const othersAllowed = r * OTHER_DOMAINS.length;
      let peakPending = 0;
      await waitFor(
        async () => {
          const status = await fleet.client.campaigns.status(id);
          const position = status.cursor.position;
          peakPending = Math.max(peakPending, status.pending);
          const byDomain = fleet.sandbox.stats().byDomain;
          const slowInjected = 3 * Math.floor(position / 10) + Math.min(position % 10, 3);
          const slowPending = slowInjected - (byDomain[SLOW_DOMAIN]?.accepted ?? 0);
          const othersSent = OTHER_DOMAINS.reduce((n, d) => n + (byDomain[d]?.accepted ?? 0), 0);
          const othersPending = position - slowInjected - othersSent;
          return slowPending >= options.maxWindow / 2 && othersPending < othersAllowed;
        },
        10 * 60_000,
        'the window bound',
      );
      const boundAt = Date.now();
      const arrivals = fleet.sandbox.accepted().filter((a) => a.sluiceId?.startsWith(`${id}_`));
      // From a second after the first arrival: the buckets' first burst and the fleet's ramp left out.
      const from = firstAt + 1_000;
      const count_ = (domain: (d: string) => boolean, start: number, end: number) =>
        arrivals.filter((a) => domain(a.domain) && a.arrivedAt >= start && a.arrivedAt < end).length;
      const isOther = (d: string) => d !== SLOW_DOMAIN;
      const span = Math.max(1, boundAt - from) / 1000;
      return {
        perReceiverRate: r,
        maxWindow: options.maxWindow,
        othersShare: count_(isOther, from, boundAt) / span / othersAllowed,
        cutShare: count_((d) => d === SLOW_DOMAIN, from, boundAt) / span / (r / 10),
        secondsToBound: (boundAt - firstAt) / 1000,
        peakPending,
      };
    } finally {
      await producer.process.stop({ signal: 'SIGTERM' });
    }
  });
}
