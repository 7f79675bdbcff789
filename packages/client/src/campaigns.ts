import type { Redis } from 'ioredis';
import { z } from 'zod';
import { PRIORITY_CLASSES, SluiceError, parseInput, type FinalState, type Keys, type PriorityClass } from '@sluice/core';
import type { Store } from '@sluice/store';
import type { QueueCache } from './internal/queues.js';
import { randomBytes } from 'node:crypto';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** What `campaigns.create` accepts. */
export const campaignInputSchema = z.strictObject({
  /** Defaults to a random id. */
  id: z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }).optional(),
  name: z.string().max(200).optional(),
  tenantId: z.string().regex(NAME, { message: 'must match [A-Za-z0-9_-]{1,64}' }).default('default'),
  /** Class of the campaign's mail. @defaultValue `'low'` */
  priority: z.enum(PRIORITY_CLASSES).default('low'),
  /** The campaign's own limit, per second. @defaultValue config `defaults.campaign` */
  rate: z.number().positive().optional(),
  burst: z.number().int().positive().optional(),
});

/** Input of `campaigns.create`. */
export type CampaignInput = z.input<typeof campaignInputSchema>;

/** A campaign's settings. */
export interface Campaign {
  id: string;
  name: string;
  tenantId: string;
  priority: PriorityClass;
  rate: number | undefined;
  burst: number | undefined;
  createdAt: number;
}

/** `campaigns.status(id)`. */
export interface CampaignStatus extends Campaign {
  paused: boolean;
  /** Messages accepted and in each final state. */
  counts: Record<'accepted' | FinalState, number>;
  /** Accepted and not final yet. */
  pending: number;
  /** Jobs in the campaign's queue: waiting (incl. paused) and delayed (booked or backing off). */
  queue: { waiting: number; delayed: number; active: number };
}

/** Campaign control. */
export interface Campaigns {
  create(input: CampaignInput): Promise<Campaign>;
  get(id: string): Promise<Campaign | null>;
  /** Stops the campaign's sends within a second; its backlog waits. */
  pause(id: string): Promise<void>;
  /** Continues where it stopped. */
  resume(id: string): Promise<void>;
  status(id: string): Promise<CampaignStatus>;
}

/** Reads a campaign hash (also used by the scheduler through the client package). */
export function parseCampaign(id: string, h: Record<string, string>): Campaign | null {
  if (!h.createdAt) return null;
  return {
    id,
    name: h.name ?? id,
    tenantId: h.tenantId ?? 'default',
    priority: (h.priority as PriorityClass | undefined) ?? 'low',
    rate: h.rate ? Number(h.rate) : undefined,
    burst: h.burst ? Number(h.burst) : undefined,
    createdAt: Number(h.createdAt),
  };
}

export function createCampaigns(redis: Redis, keys: Keys, store: Store, queues: QueueCache): Campaigns {
  async function mustGet(id: string): Promise<Campaign> {
    const c = parseCampaign(id, await redis.hgetall(keys.campaign(id)));
    if (!c) throw new SluiceError('unknown_campaign', `no campaign with id ${id}`, { path: 'campaignId' });
    return c;
  }
  return {
    async create(input) {
      const c = parseInput(campaignInputSchema, input, { code: 'invalid_argument', what: 'campaign' });
      const id = c.id ?? `c${randomBytes(8).toString('hex')}`;
      const fields: Record<string, string> = {
        name: c.name ?? id,
        tenantId: c.tenantId,
        priority: c.priority,
        createdAt: String(Date.now()),
      };
      if (c.rate !== undefined) fields.rate = String(c.rate);
      if (c.burst !== undefined) fields.burst = String(c.burst);
      // HSETNX on createdAt claims the id; the rest is written only by the winner.
      const claimed = await redis.hsetnx(keys.campaign(id), 'createdAt', fields.createdAt!);
      if (claimed === 0) throw new SluiceError('campaign_exists', `campaign ${id} exists`, { path: 'id' });
      await redis.multi().hset(keys.campaign(id), fields).sadd(keys.campaigns(), id).exec();
      return (await this.get(id))!;
    },
    async get(id) {
      return parseCampaign(id, await redis.hgetall(keys.campaign(id)));
    },
    async pause(id) {
      await mustGet(id);
      // The flag stops admitted mail at the workers; the queue pause stops admission.
      await store.setCampaignPaused(id, true);
      await queues.get(keys.campaignQueue(id)).pause();
    },
    async resume(id) {
      await mustGet(id);
      await queues.get(keys.campaignQueue(id)).resume();
      await store.setCampaignPaused(id, false);
    },
    async status(id) {
      const c = await mustGet(id);
      const q = queues.get(keys.campaignQueue(id));
      const [paused, counts, jobs] = await Promise.all([
        q.isPaused(),
        store.campaignCounts(id),
        q.getJobCounts('waiting', 'delayed', 'active', 'prioritized'),
      ]);
      const final = counts.sent + counts.rejected + counts.suppressed + counts.expired + counts.cancelled;
      return {
        ...c,
        paused,
        counts,
        pending: Math.max(0, counts.accepted - final),
        queue: { waiting: (jobs.waiting ?? 0) + (jobs.prioritized ?? 0), delayed: jobs.delayed ?? 0, active: jobs.active ?? 0 },
      };
    },
  };
}
