// A backend's producer as its own process, for the bench's `campaign` figure (its RSS
// measured alone) and the inject-kill fault scenario (SIGKILLed and restarted). It reads the
// campaign's cursor, injects the rest of a deterministic list from there, and prints one JSON
// line per event on stdout: `ready`, `start` (epoch ms, and of the launch when it launched the
// campaign itself, as a backend does once its process is up), `progress` and `done`, with its RSS.
// `SLUICE_INJECT_PRODUCER` is a JSON `ProducerTask`. Mode `sendBulk` is the baseline: the
// same campaign as whole messages, built at once and given to one `sendBulk`.
import { readFileSync } from 'node:fs';
import { createClient } from '@sluice/client';
import { launchCampaign, recipientsFrom, wholeMessage, type RecipientMix } from './campaign-recipients.js';

/** What the producer is asked to do. */
export interface ProducerTask {
  redisUrl: string;
  prefix: string;
  campaignId: string;
  mix: RecipientMix;
  /** The list's length: positions 0…count-1. */
  count: number;
  mode?: 'inject' | 'sendBulk';
  chunkSize?: number;
  /** Launch the campaign (created, not yet launched) on a forecast of the list before injecting. */
  launch?: boolean;
  /** The client's fleet check: `off` for the baseline, which queues with no fleet running. @defaultValue `'error'` */
  fleetCheck?: 'error' | 'off';
}

const task = JSON.parse(process.env.SLUICE_INJECT_PRODUCER ?? '') as ProducerTask;
const print = (event: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
};

let rssPeak = process.memoryUsage().rss;
const sampler = setInterval(() => {
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
}, 100);
/** The kernel's high-water mark of this process's RSS (Linux), else the sampled peak. */
function highWater(): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kb === undefined ? rssPeak : Math.max(rssPeak, Number(kb) * 1024);
  } catch {
    return rssPeak;
  }
}

const client = createClient({ redis: task.redisUrl, prefix: task.prefix, fleetCheck: task.fleetCheck ?? 'error' });
try {
  const from = task.mode === 'sendBulk' ? 0 : (await client.campaigns.status(task.campaignId)).cursor.position;
  print('ready', { from, rss: process.memoryUsage().rss });
  const launchedAt = task.launch
    ? await launchCampaign(client, task.campaignId, { mix: task.mix, recipientCount: task.count })
    : undefined;
  const startedAt = Date.now();
  print('start', { at: startedAt, from, launchedAt });
  let accepted = 0;
  if (task.mode === 'sendBulk') {
    const messages = Array.from({ length: task.count }, (_, i) => wholeMessage(task.campaignId, task.mix, i));
    accepted = (await client.sendBulk(messages)).length;
  } else {
    let printedAt = 0;
    const result = await client.campaigns.inject(task.campaignId, recipientsFrom(task.mix, from, task.count), {
      from,
      ...(task.chunkSize === undefined ? {} : { chunkSize: task.chunkSize }),
      onProgress(p) {
        if (Date.now() - printedAt < 250) return;
        printedAt = Date.now();
        print('progress', {
          position: p.cursor.position,
          waiting: p.waiting ?? null,
          pending: p.window.pending,
          rss: process.memoryUsage().rss,
        });
      },
    });
    accepted = result.accepted;
  }
  const endedAt = Date.now();
  clearInterval(sampler);
  print('done', { accepted, startedAt, endedAt, rssPeak: highWater() });
} finally {
  clearInterval(sampler);
  await client.close();
}
