import { expiresAt, jobIdOf, type IntakeJobData } from '@sluice/core';
import { CONTINUE, type Deps, type Step } from './types.js';

/** Record states an intake job admits from: new mail, and mail given back to admission. */
const ADMITTABLE: readonly string[] = ['queued', 'retrying'];

/**
 * Whether a record that says `dispatched` has no dispatch job behind it, so this run of the
 * intake job admits it again. Only a fleet older than 2026.12 wrote `dispatched` (admission
 * now writes no record: see `dispatch`); its scheduler may have died between the two.
 */
async function dispatchLost(deps: Pick<Deps, 'queues'>, m: IntakeJobData): Promise<boolean> {
  return (await deps.queues.dispatchOf(m).getJobState(jobIdOf(m))) === 'unknown';
}

/**
 * Check 1, the record and suppression: a message seen for the first time gets its record;
 * a message past admission (final, `submitted` or `sending`, or `dispatched` by an older fleet
 * with its dispatch job there) is a duplicate job; a suppressed recipient ends as `suppressed`.
 */
export async function checkRecord(deps: Pick<Deps, 'store' | 'queues'>, m: IntakeJobData): Promise<Step> {
  const { store } = deps;
  const peek = await store.peek(m.id, m.tenantId, m.to);
  if (peek.state === null) await store.accept(m);
  else if (peek.state === 'dispatched' ? !(await dispatchLost(deps, m)) : !ADMITTABLE.includes(peek.state)) {
    return { kind: 'duplicate', state: peek.state };
  }
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
