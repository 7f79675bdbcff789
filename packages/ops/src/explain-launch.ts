import type { Redis } from 'ioredis';
import { recipientDomain, type Keys } from '@sluice/core';
import { createLaunchStore } from '@sluice/store';

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
  // The gate the injection reads: a few bytes, where the record holds every projection.
  const gate = await createLaunchStore(redis, keys).gate(campaignId, now);
  if (gate.state === 'refused' && gate.code === 'campaign_not_launched') return undefined;
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
