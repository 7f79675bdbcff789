// A campaign's list as the bench and the inject-kill fault scenario inject it: a deterministic
// generator (position → recipient), the content stored once, and the two steps around an
// injection that the launch decision and the outcome stream will fill in.
import type { RecipientInput, SluiceClient } from '@sluice/client';

/**
 * How recipients spread over domains: `even`, 20 domains in turn; `slow30`, 30% to
 * `slow.test` (positions whose last digit is 0–2) and 10% to each of `o0.test`…`o6.test`.
 */
export type RecipientMix = 'even' | 'slow30';

/** The domain whose receiver `slow30` cuts, and the others' names. */
export const SLOW_DOMAIN = 'slow.test';
export const OTHER_DOMAINS = Array.from({ length: 7 }, (_, i) => `o${i}.test`);

/** The recipient domain at `position`. */
export function domainOf(mix: RecipientMix, position: number): string {
  if (mix === 'even') return `d${position % 20}.test`;
  const digit = position % 10;
  return digit < 3 ? SLOW_DOMAIN : OTHER_DOMAINS[digit - 3]!;
}

/** The recipient at `position`: the same on every run and in every process. */
export function recipientAt(mix: RecipientMix, position: number): RecipientInput {
  return { to: `u${position}@${domainOf(mix, position)}`, data: { first: `F${position}` } };
}

/** Recipients `from`…`count - 1`, made as they are read (the list is never held whole). */
export function* recipientsFrom(mix: RecipientMix, from: number, count: number): Generator<RecipientInput> {
  for (let i = from; i < count; i++) yield recipientAt(mix, i);
}

/** A paragraph of about 1 KB, the html of the measurements. */
const PARAGRAPH = `<p>${'Our spring catalogue is out, with the prices of last year. '.repeat(16)}</p>`;

/** The campaign's content: templates over each recipient's `data.first`, about 1 KB of html. */
export const CAMPAIGN_CONTENT = {
  from: 'Acme News <news@acme.test>',
  subject: 'Hello {{first}}',
  html: `<h1>Dear {{first}}</h1>${PARAGRAPH}`,
  text: 'Dear {{first}}, our spring catalogue is out.',
} as const;

/** The same message whole, as `sendBulk` takes it (the baseline: content in every job). */
export function wholeMessage(campaignId: string, mix: RecipientMix, position: number) {
  const first = `F${position}`;
  return {
    from: CAMPAIGN_CONTENT.from,
    to: recipientAt(mix, position).to,
    subject: `Hello ${first}`,
    html: CAMPAIGN_CONTENT.html.replace('{{first}}', first),
    text: CAMPAIGN_CONTENT.text.replace('{{first}}', first),
    campaignId,
  };
}

/** How many recipients of the first `count` go to each domain: a launch's forecast. */
export function domainCounts(mix: RecipientMix, count: number): Record<string, number> {
  const counts: Record<string, number> = {};
  // Both mixes repeat every 20 positions.
  for (let i = 0; i < Math.min(count, 20); i++) {
    const domain = domainOf(mix, i);
    counts[domain] = (counts[domain] ?? 0) + Math.floor((count - 1 - i) / 20) + 1;
  }
  return counts;
}

/** What {@link prepareCampaign} did. */
export interface PreparedCampaign {
  /** Epoch ms of the launch decision, if the campaign has one: the first send is timed from it. */
  launchedAt: number | undefined;
}

/**
 * Everything a campaign needs before its recipients are injected: today it is created with
 * its content. The launch decision goes here (`campaigns.launch(id, forecast)`, the forecast
 * from {@link domainCounts}), setting `launchedAt`: injection will refuse a campaign not launched.
 */
export async function prepareCampaign(
  client: SluiceClient,
  id: string,
  _list: { mix: RecipientMix; recipientCount: number },
): Promise<PreparedCampaign> {
  await client.campaigns.create({ id, priority: 'low', content: CAMPAIGN_CONTENT });
  return { launchedAt: undefined };
}

/** A backend's outcome consumer of one campaign, started before its injection. */
export interface OutcomeConsumer {
  /**
   * Reads and acknowledges what is left, then stops; resolves how many outcomes were
   * acknowledged in all, or `undefined` when there was no outcome stream to read. Again: the same.
   */
  stop(): Promise<number | undefined>;
}

/**
 * Starts consuming the campaign's outcomes as a backend would, acknowledging each, so its
 * records shrink to what `messages.status` needs and the stream's bound never holds the
 * injection. Today the client has no outcome stream (`client.outcomes`): nothing is read,
 * and `stop` resolves `undefined` (the bench prints the figure after acknowledgement as not
 * measured). With one, this subscribes a group, reads and acks in a loop until `stop`.
 */
export function startOutcomeConsumer(_client: SluiceClient, _campaignId: string): OutcomeConsumer {
  return { stop: async () => undefined };
}
