import type { HashCopy } from './hash-copy.js';
import type { Adjustments } from './types.js';

/** The governor's pauses of campaigns (`govpause:`). */
export type CampaignPauses = Pick<Adjustments, 'campaignPause' | 'campaignPauses' | 'setCampaignPause'>;

/** The campaign-pause operations over a process's copy of the hash. */
export function createCampaignPauses(copy: HashCopy): CampaignPauses {
  return {
    campaignPause: (campaignId) => copy.get('campaignPause', campaignId),
    campaignPauses: () => copy.names('campaignPause'),
    async setCampaignPause(campaignId, untilMs, rule = '') {
      await copy.write('campaignPause', campaignId, untilMs === undefined ? undefined : { untilMs, rule });
    },
  };
}
