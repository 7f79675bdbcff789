import type { DispatchJobData } from '@sluice/core';
import { messageIdHeader, type Outcome, type Provider } from '@sluice/providers';
import type { Store } from '@sluice/store';
import type { OnStep } from './steps.js';

/**
 * The provider call, with the message's stable `Message-ID`. The request's final bytes
 * wait until the record says `submitted` (the adapter's gate): a crash before the mark
 * leaves the ESP an incomplete request (safe to resend), one after it is known to be
 * ambiguous. Redis unreachable at the gate: the request is aborted, a transient failure.
 */
export async function send(store: Store, provider: Provider, m: DispatchJobData, onStep?: OnStep): Promise<Outcome> {
  let marked: Promise<void> | undefined;
  const outcome = await provider.send(m, {
    messageIdHeader: messageIdHeader(m),
    beforeSubmit: () => {
      onStep?.('withheld', m.id);
      marked ??= store.transition(m.id, 'submitted').then(() => onStep?.('marked', m.id));
      return marked;
    },
  });
  // A request given up while its gate was pending (timed out) did not wait for the mark:
  // the outcome is settled only once the mark is written, never before it.
  await marked?.catch(() => undefined);
  return outcome;
}
