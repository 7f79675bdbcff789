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

/** A campaign's list as its launch forecasts it. */
export interface CampaignList {
  mix: RecipientMix;
  recipientCount: number;
}

/**
 * Everything a campaign needs before its recipients are injected: created with its content,
 * then launched on a forecast of its whole list (the injection refuses a campaign not launched).
 */
export async function prepareCampaign(client: SluiceClient, id: string, list: CampaignList): Promise<void> {
  await createCampaign(client, id);
  await launchCampaign(client, id, list);
}

/** Creates the campaign with its content (priority low). */
export async function createCampaign(client: SluiceClient, id: string): Promise<void> {
  await client.campaigns.create({ id, priority: 'low', content: CAMPAIGN_CONTENT });
}

/**
 * Launches the campaign on a forecast of its whole list; resolves the epoch ms of the launch
 * request (the first send is timed from it). Throws unless the decision is `accept`.
 */
export async function launchCampaign(client: SluiceClient, id: string, list: CampaignList): Promise<number> {
  const launchedAt = Date.now();
  const { decision } = await client.campaigns.launch(id, {
    total: list.recipientCount,
    domains: domainCounts(list.mix, list.recipientCount),
  });
  if (decision?.kind !== 'accept') throw new Error(`campaign ${id}: launch ${decision?.kind}: ${decision?.reason}`);
  return launchedAt;
}

/** A backend's outcome consumer of one campaign, started before its injection. */
export interface OutcomeConsumer {
  /** Reads and acknowledges what is left of the campaign, then stops; resolves how many of its outcomes were acknowledged. */
  stop(): Promise<number>;
}

/**
 * Consumes the outcome stream as a backend would (one group, acknowledging each batch), so
 * the records of sent mail shrink as `delivery.retention` says and the stream's bound never
 * holds the injection. Counts the final outcomes of `campaignId`.
 */
export function startOutcomeConsumer(client: SluiceClient, campaignId: string): OutcomeConsumer {
  const group = `bench-${campaignId}`;
  let running = true;
  let acked = 0;
  const ready = client.outcomes.subscribe(group, { from: 'now' });
  const loop = (async () => {
    await ready;
    for (;;) {
      const events = await client.outcomes.read(group, 'c1', { count: 1_000, blockMs: running ? 500 : 0 });
      if (events.length === 0 && !running) return;
      for (const e of events) if (e.campaignId === campaignId && e.state !== 'deferred') acked++;
      if (events.length > 0)
        await client.outcomes.ack(
          group,
          events.map((e) => e.id),
        );
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await client.outcomes.unsubscribe(group);
      return acked;
    },
  };
}
