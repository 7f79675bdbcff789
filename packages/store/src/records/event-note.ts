import type { Keys } from '@sluice/core';
import type { StoreRedis } from '../redis/scripts.js';

/**
 * Notes an ESP event on its message's record (`record-event-1.lua`: the record's `event` and
 * `eventAt`, only when later than the one it shows). Idempotent, so it runs for every delivery
 * of an event: a crash after the tenant's part (`apply-event-3.lua`) and before this one is
 * repaired by the ESP's retry of the webhook.
 */
export async function noteEvent(
  redis: StoreRedis,
  keys: Keys,
  messageId: string,
  kind: string,
  at: number,
): Promise<void> {
  await redis.sluiceRecordEvent(keys.message(messageId), kind, at);
}
