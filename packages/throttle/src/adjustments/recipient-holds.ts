import { createHash } from 'node:crypto';
import type { HashCopy } from './hash-copy.js';
import type { Adjustments } from './types.js';

/**
 * The most recipients held at once. Each is a field every process reads with the hash, so
 * past this a new hold is not kept (that recipient's other mail meets the refusal and waits
 * its own retry, as before holds): a storm of busy recipients cannot bloat every refresh.
 */
export const MAX_RECIPIENT_HOLDS = 500;

/** A recipient's name in the hash: a hash of its address, so no address sits in the shared hash. */
const holdName = (address: string): string =>
  createHash('sha1').update(address.trim().toLowerCase()).digest('base64url').slice(0, 16);

/** Recipients held after a per-recipient receiving limit (`rcpt:`). */
export type RecipientHolds = Pick<Adjustments, 'recipientHeldUntil' | 'holdRecipient'>;

/** The recipient-hold operations over a process's copy of the hash. */
export function createRecipientHolds(copy: HashCopy): RecipientHolds {
  return {
    recipientHeldUntil(address) {
      const until = copy.get('recipientHold', holdName(address));
      return until !== undefined && until > copy.clock() ? until : undefined;
    },
    async holdRecipient(address, untilMs) {
      const now = copy.clock();
      // Ended holds go first, so the cap counts only those in force.
      const names = copy.names('recipientHold');
      const ended = names.filter((n) => (copy.get('recipientHold', n) ?? 0) <= now);
      for (const n of ended) await copy.write('recipientHold', n, undefined);
      const name = holdName(address);
      const current = copy.get('recipientHold', name);
      if (current === undefined && names.length - ended.length >= MAX_RECIPIENT_HOLDS) return false;
      if (current !== undefined && current >= untilMs) return true;
      await copy.write('recipientHold', name, untilMs);
      return true;
    },
  };
}
