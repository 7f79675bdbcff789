import type { Campaign, CampaignInput, CampaignStatus, Campaigns as Lifecycle } from '@sluice/store';

/**
 * Campaign control: the campaign lifecycle of `@sluice/store`, which every surface (admin
 * API, Bull Board, CLI, governor) calls too.
 */
export interface Campaigns {
  /** Creates a campaign; `campaign_exists` if the id is taken, `invalid_argument` naming the field. */
  create(input: CampaignInput): Promise<Campaign>;
  get(id: string): Promise<Campaign | null>;
  /** Stops the campaign's sends within a second; its backlog waits. */
  pause(id: string): Promise<void>;
  /**
   * Continues where it stopped. A cancelled campaign is refused with `campaign_cancelled`
   * and stays paused: cancelling cannot be undone.
   */
  resume(id: string): Promise<void>;
  status(id: string): Promise<CampaignStatus>;
}

/** The client's face of the lifecycle. */
export function clientCampaigns(lifecycle: Lifecycle): Campaigns {
  return {
    create: (input) => lifecycle.create(input),
    get: (id) => lifecycle.get(id),
    pause: (id) => lifecycle.pause(id, { actor: 'client' }),
    async resume(id) {
      await lifecycle.resume(id, { actor: 'client' });
    },
    status: (id) => lifecycle.status(id),
  };
}
