import { expiresAt, type IntakeJobData } from '@sluice/core';
import { CONTINUE, type Deps, type Step } from './types.js';

/**
 * Check 1, the record and suppression: a message seen for the first time gets its record;
 * a final or already dispatched message is a duplicate job; a suppressed recipient ends
 * as `suppressed`.
 */
export async function checkRecord(deps: Pick<Deps, 'store'>, m: IntakeJobData): Promise<Step> {
  const { store } = deps;
  const peek = await store.peek(m.id, m.tenantId, m.to);
  if (peek.state === null) await store.accept(m);
  else if (peek.state !== 'queued' && peek.state !== 'retrying') return { kind: 'duplicate', state: peek.state };
  if (peek.suppressed !== null) {
    await store.finalize(m.id, 'suppressed', { campaignId: m.campaignId, reply: `suppressed: ${peek.suppressed}` });
    return { kind: 'final', state: 'suppressed' };
  }
  return CONTINUE;
}

/**
 * Check 2, expiry: a message past its business expiry ends as `expired`, never sent late;
 * `unconfirmed` if an earlier attempt was ambiguous (that copy may have been delivered).
 */
export async function checkExpiry(deps: Pick<Deps, 'store' | 'config'>, m: IntakeJobData, now: number): Promise<Step> {
  const expiry = expiresAt(m, deps.config.delivery.lifetimeMs);
  if (now < expiry) return CONTINUE;
  await deps.store.finalize(m.id, 'expired', {
    campaignId: m.campaignId,
    reply: `expired before admission (expiresAt ${new Date(expiry).toISOString()})`,
    ifAmbiguous: 'unconfirmed',
  });
  return { kind: 'final', state: 'expired' };
}
