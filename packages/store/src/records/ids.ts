import { createHash, randomBytes } from 'node:crypto';

/**
 * A message id: the BullMQ job id, the `Message-ID` local part and the record key.
 * With an idempotency key it is derived from (tenant, key), so a repeat maps to the same
 * message; otherwise random. Never contains `:` and is never digits only (BullMQ rules).
 */
export function messageId(tenantId: string, idempotencyKey?: string): string {
  if (idempotencyKey === undefined) return `m${randomBytes(12).toString('hex')}`;
  return `k${createHash('sha256').update(tenantId).update('\0').update(idempotencyKey).digest('hex').slice(0, 32)}`;
}

/**
 * The id of the recipient at `position` (its index in the list) of a campaign's injection:
 * `<campaignId>_<position>`. The same recipient always gets the same id, so injecting it
 * again is a no-op; the compact records are found from it (campaign and block).
 */
export function injectedId(campaignId: string, position: number): string {
  return `${campaignId}_${position}`;
}

export { parseInjectedId } from '@sluice/core';
