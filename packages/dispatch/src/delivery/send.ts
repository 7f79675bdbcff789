import type { DispatchJobData } from '@sluice/core';
import { messageIdHeader, type Outcome, type Provider } from '@sluice/providers';
import type { Store } from '@sluice/store';

/**
 * The provider call, with the message's stable `Message-ID`. Once the adapter says the
 * request went out in full the record says `submitted`: a crash from then on is known to
 * be ambiguous, one before it safe to resend. Returns once that mark is written.
 */
export async function send(store: Store, provider: Provider, m: DispatchJobData): Promise<Outcome> {
  let submitted: Promise<unknown> = Promise.resolve();
  const outcome = await provider.send(m, {
    messageIdHeader: messageIdHeader(m),
    onSubmitted: () => {
      submitted = store.transition(m.id, 'submitted');
    },
  });
  await submitted;
  return outcome;
}
