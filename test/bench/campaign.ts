// The bench's `campaign` figure (issue 13): a campaign injected by a producer process through
// a real fleet, against the same campaign given to `sendBulk` whole in the same run.
import { runCut, type CutRun } from './campaign-cut.js';
import { runBulk, runInjected, type BulkRun, type InjectedRun } from './campaign-run.js';
import { fmt, type Row } from './support.js';

/** The sizes of the campaign figure's runs. */
export interface CampaignPlan {
  /** The campaign measured. */
  recipients: number;
  /** The smaller campaign whose Redis peak the measured one's must stay within 20% of (a tenth; half in quick). */
  small: number;
  /** The `sendBulk` baseline's size; its producer RSS is scaled to `recipients`. */
  bulk: number;
  /** The cut-receiver run: each other receiver's rate and the window bound. */
  cut: { perReceiverRate: number; maxWindow: number };
}

/** Figures of the campaign scenario. */
export interface CampaignFigures {
  /** The measured campaign and its tenth, both with `until-acknowledged` retention: the window alone. */
  run: InjectedRun;
  small: InjectedRun;
  /** The tenth again with the default retention (`compact`): what stays per recipient. */
  kept: InjectedRun;
  bulk: BulkRun;
  /** The baseline producer's RSS peak scaled linearly from `bulk.recipients` to `run.recipients`. */
  bulkRssScaled: number;
  cut: CutRun;
}

/** Runs the campaign scenario's parts one after another, each on a Redis and fleet of its own. */
export async function benchCampaign(
  plan: CampaignPlan,
  step: (what: string) => void = () => undefined,
): Promise<CampaignFigures> {
  step(`campaign: ${plan.recipients} recipients injected (retention until-acknowledged)`);
  const run = await runInjected(plan.recipients, 'until-acknowledged', 2, true);
  step(`campaign: ${plan.small} recipients injected (flatness)`);
  const small = await runInjected(plan.small, 'until-acknowledged', 2, true);
  step(`campaign: ${Math.min(plan.small, 20_000)} recipients injected (default retention, compact)`);
  const kept = await runInjected(Math.min(plan.small, 20_000), 'compact');
  step(`campaign: ${plan.bulk} whole messages by sendBulk (baseline)`);
  const bulk = await runBulk(plan.bulk);
  step(`campaign: a receiver with 30% of the list cut to a tenth`);
  const cut = await runCut(plan.cut);
  const bulkRssScaled =
    bulk.producerRssIdle + ((bulk.producerRssPeak - bulk.producerRssIdle) * plan.recipients) / plan.bulk;
  return { run, small, kept, bulk, bulkRssScaled, cut };
}

/** The figure's rows in the bench table. */
export function campaignRows(f: CampaignFigures): Row[] {
  const { run, small, kept, bulk, cut } = f;
  const n = fmt(run.recipients);
  const peakRatio = run.redisPeakAboveIdle / Math.max(1, small.redisPeakAboveIdle);
  return [
    [
      `campaign: injection rate (${n})`,
      `${fmt(run.injectPerSec)}/s accepted; ${fmt(run.sendPerSec)}/s sent`,
      `${fmt(bulk.perSec)}/s sendBulk (${fmt(bulk.recipients)}, no fleet)`,
      `${(run.injectPerSec / bulk.perSec).toFixed(2)}`,
      'reported (the window paces it at the send rate)',
    ],
    [
      `campaign: producer RSS peak (${n})`,
      mb(run.producerRssPeak),
      `${mb(f.bulkRssScaled)} sendBulk (${mb(bulk.producerRssPeak)} at ${fmt(bulk.recipients)}, scaled)`,
      `${(f.bulkRssScaled / run.producerRssPeak).toFixed(1)}× less`,
      '< 200 MB',
    ],
    [
      `campaign: Redis peak above idle (${n}, until-acknowledged)`,
      mb(run.redisPeakAboveIdle),
      `${mb(small.redisPeakAboveIdle)} at ${fmt(small.recipients)}`,
      `${peakRatio.toFixed(2)}×`,
      '≤ 100 MB at 1,000,000; ≤ 1.2× the smaller',
    ],
    [
      `campaign: Redis keys at the peak (${n})`,
      parts(run),
      `${parts(small)} at ${fmt(small.recipients)}`,
      '-',
      'context: what the peak holds',
    ],
    [
      `campaign: Redis peak less what stays after (${n})`,
      mb(windowOf(run)),
      `${mb(windowOf(small))} at ${fmt(small.recipients)}`,
      `${(windowOf(run) / Math.max(1, windowOf(small))).toFixed(2)}×`,
      'context: the window, records left out',
    ],
    [
      `campaign: Redis B/recipient after the send`,
      `${fmt(run.bytesPerRecipientAfterSend)} B`,
      `${fmt(bulk.redisBytesPerRecipient)} B queued by sendBulk`,
      `${(bulk.redisBytesPerRecipient / Math.max(1, run.bytesPerRecipientAfterSend)).toFixed(1)}× less`,
      'reported (records kept for their retention)',
    ],
    [
      `campaign: its keys' B/recipient after ack, compact (${fmt(kept.recipients)})`,
      `${fmt(kept.keptBytesPerRecipient)} B`,
      `used_memory: ${fmt(kept.bytesPerRecipientAfterAck)} B after, ${fmt(kept.bytesPerRecipientAfterSend)} B before the ack`,
      '-',
      '≤ 128 B (default retention)',
    ],
    [
      `campaign: its keys' B/recipient after ack, until-acknowledged (${n})`,
      `${run.keptBytesPerRecipient.toFixed(2)} B`,
      `used_memory: ${fmt(run.bytesPerRecipientAfterAck)} B after the ack`,
      '-',
      'nothing per recipient',
    ],
    [
      `campaign: first send after launch (${n})`,
      `${fmt(run.firstSendMs)} ms`,
      `${fmt(small.firstSendMs)} ms at ${fmt(small.recipients)}`,
      '-',
      '≤ 2,000 ms',
    ],
    [
      'campaign: others’ rate, 30% cut to 1/10',
      `${pct(cut.othersShare)} of 7 × ${cut.perReceiverRate}/s`,
      `cut one ${pct(cut.cutShare)} of ${cut.perReceiverRate / 10}/s`,
      `bound after ${cut.secondsToBound.toFixed(0)} s, ≤ ${fmt(cut.peakPending)} pending`,
      `≥ 90% until the bound (${fmt(cut.maxWindow)})`,
    ],
    ['campaign: duplicates at the sandbox', String(run.duplicates + small.duplicates + kept.duplicates), '-', '-', '0'],
  ];
}

/** The figure as bench-results.json keeps it. */
export function campaignResults(f: CampaignFigures) {
  const { run, small, kept, bulk, cut } = f;
  return {
    recipients: run.recipients,
    injectPerSec: Math.round(run.injectPerSec),
    sendPerSec: Math.round(run.sendPerSec),
    producerRssBytes: run.producerRssPeak,
    redisPeakBytes: run.redisPeakAboveIdle,
    smallRecipients: small.recipients,
    smallRedisPeakBytes: small.redisPeakAboveIdle,
    redisPeakKeys: { run: peakKeys(run), small: peakKeys(small) },
    bytesPerRecipientAfterSend: Math.round(run.bytesPerRecipientAfterSend),
    bytesPerRecipientAfterAckUntilAcknowledged: Math.round(run.bytesPerRecipientAfterAck),
    bytesPerRecipientAfterAckCompact: Math.round(kept.bytesPerRecipientAfterAck),
    keptBytesPerRecipientCompact: Math.round(kept.keptBytesPerRecipient),
    firstSendMs: run.firstSendMs,
    duplicates: run.duplicates + small.duplicates + kept.duplicates,
    seconds: Math.round(run.seconds),
    bulk: {
      recipients: bulk.recipients,
      perSec: Math.round(bulk.perSec),
      redisBytesPerRecipient: Math.round(bulk.redisBytesPerRecipient),
      producerRssBytes: bulk.producerRssPeak,
      producerRssScaledBytes: Math.round(f.bulkRssScaled),
    },
    cut: {
      perReceiverRate: cut.perReceiverRate,
      maxWindow: cut.maxWindow,
      othersSharePct: Math.round(cut.othersShare * 1000) / 10,
      cutSharePct: Math.round(cut.cutShare * 1000) / 10,
      secondsToBound: Math.round(cut.secondsToBound),
      peakPending: cut.peakPending,
    },
  };
}

/** The Redis keys near the peak by kind: the window's jobs, the records, the per-second keys, the rest. */
function peakKeys(r: InjectedRun): Record<'jobs' | 'records' | 'per-second' | 'rest', number> {
  const kinds = { jobs: 0, records: 0, 'per-second': 0, rest: 0 };
  for (const [pattern, bytes] of Object.entries(r.peakBreakdown ?? {})) {
    const kind = /:\{campaign-[^:]+\}:[^:]+_#$/.test(pattern)
      ? 'jobs'
      : /:msg:/.test(pattern)
        ? 'records'
        : /:(\{[^}]*:sig\}|sig|stats):/.test(pattern)
          ? 'per-second'
          : 'rest';
    kinds[kind] += bytes;
  }
  return kinds;
}

const parts = (r: InjectedRun): string =>
  Object.entries(peakKeys(r))
    .map(([kind, bytes]) => `${kind} ${mb(bytes)}`)
    .join(', ');

/** The peak less what the campaign left in Redis after its send (mostly its records): what its window cost. */
const windowOf = (r: InjectedRun): number => r.redisPeakAboveIdle - r.bytesPerRecipientAfterSend * r.recipients;
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
const pct = (share: number): string => `${(share * 100).toFixed(1)}%`;
