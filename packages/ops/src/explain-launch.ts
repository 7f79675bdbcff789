import type { Redis } from 'ioredis';
import { recipientDomain, type Keys } from '@sluice/core';
import { createLaunchStore, readGate, gateFor, type LaunchRecord } from '@sluice/store';
import type { CampaignLaunch } from './types.js';

/** A campaign's launch as the status snapshot (and the dashboard) shows it. */
export function launchSummary(record: LaunchRecord): CampaignLaunch {
  const d = record.decision;
  const stopped = Object.keys(record.stopped);
  if (!d) return { kind: 'pending', reason: 'no scheduler has decided it yet', stopped };
  return {
    kind: d.kind,
    rule: d.rule,
    reason: d.reason,
    approval: d.approval,
    ...(d.approvedBy ? { approvedBy: d.approvedBy } : {}),
    ...(d.waves ? { waves: d.waves.length } : {}),
    ...(d.untilMs ? { untilMs: d.untilMs } : {}),
    stopped,
  };
}

/**
 * What a campaign's launch says of a message not yet final: its receiver stopped by the
 * re-check, or the campaign's injection waiting (a delay, a held launch, a split waiting for
 * its next wave or an approval). Undefined when the launch holds nothing back.
 */
export async function launchNote(
  redis: Redis,
  keys: Keys,
  campaignId: string,
  to: string,
  now: number,
): Promise<string | undefined> {
  const stored = await createLaunchStore(redis, keys).read(campaignId);
  if (!stored) return undefined;
  const gate = readGate(gateFor(stored.record), now);
  const domain = recipientDomain(to);
  if (gate.state === 'open') {
    const stopped = gate.stopped[domain];
    if (stopped)
      return `its campaign's launch stopped this receiver (${stopped}): its recipients not injected yet end expired`;
    return gate.nextAtMs
      ? `its campaign is launched in waves: recipients up to position ${gate.maxPosition} now, the next wave at ${new Date(gate.nextAtMs).toISOString()}`
      : undefined;
  }
  if (gate.state === 'wait')
    return `its campaign's launch holds new recipients back until ${new Date(gate.untilMs).toISOString()}: ${gate.reason}`;
  return `its campaign's launch was refused: ${gate.reason}`;
}
