import type { Redis } from 'ioredis';
import type { Keys, ServiceLogger, SluiceConfig } from '@sluice/core';
import type { DeliveryEvent } from '@sluice/events';
import type { ApplyResult, Feedback } from '@sluice/store';

/** What the webhook routes share. */
export interface WebhookDeps {
  config: SluiceConfig['api']['webhooks'];
  logger: ServiceLogger;
  redis: Redis;
  keys: Keys;
  feedback: Feedback;
}

/** What a webhook answers once its events are applied. */
export interface Applied {
  events: number;
  duplicates: number;
  suppressed: number;
}

/** Applies events in order and counts what happened, for the answer and the log. */
export async function applyAll(feedback: Feedback, events: readonly DeliveryEvent[]): Promise<Applied> {
  const out: Applied = { events: events.length, duplicates: 0, suppressed: 0 };
  for (const e of events) {
    const r: ApplyResult = await feedback.apply(e);
    if (r.outcome === 'duplicate') out.duplicates++;
    if (r.outcome === 'suppressed') out.suppressed++;
  }
  return out;
}
