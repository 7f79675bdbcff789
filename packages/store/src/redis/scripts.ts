import type { Redis } from 'ioredis';
import { defineScripts as define, type WithScripts } from '@sluice/core';

/** The store's Lua scripts, one a file, named `<name>-<numberOfKeys>.lua`. */
const SCRIPTS = {
  sluiceAccept: { file: 'accept-4.lua', keys: 4 },
  sluiceTransition: { file: 'transition-3.lua', keys: 3 },
  sluiceSubmitBatch: { file: 'submit-n.lua', keys: 'n' as const },
  sluiceFinalize: { file: 'finalize-n.lua', keys: 'n' as const },
  sluiceRetain: { file: 'retain-4.lua', keys: 4 },
  sluiceApplyEvent: { file: 'apply-event-3.lua', keys: 3 },
  sluiceRecordEvent: { file: 'record-event-1.lua', keys: 1 },
  sluiceResumeCampaign: { file: 'resume-campaign-1.lua', keys: 1 },
  sluiceFeedSeen: { file: 'feed-seen-1.lua', keys: 1 },
  sluiceLaunchSwap: { file: 'launch-swap-1.lua', keys: 1 },
  sluicePruneWork: { file: 'prune-work-1.lua', keys: 1 },
  sluiceArchiveCampaign: { file: 'archive-campaign-5.lua', keys: 5 },
  sluiceDeleteCampaign: { file: 'delete-campaign-5.lua', keys: 5 },
  sluiceIdemClaim: { file: 'idem-claim-1.lua', keys: 1 },
  sluiceIdemSettle: { file: 'idem-settle-1.lua', keys: 1 },
};

/** A Redis client with the store's scripts defined. */
export type StoreRedis = WithScripts<Redis, typeof SCRIPTS>;

/** Defines the store scripts on a connection (idempotent). */
export function defineScripts(redis: Redis): StoreRedis {
  return define(redis, new URL('../lua/', import.meta.url), SCRIPTS);
}
