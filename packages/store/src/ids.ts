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
