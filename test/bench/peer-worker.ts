// The `batch` figure's peer: what a user would build instead of Sluice. One BullMQ queue,
// workers calling the real SES SDK once per job (SendEmail), no limits, no records.
// Usage: peer-worker.ts <redisUrl> <prefix> <sandboxUrl> <concurrency>
import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { readyUntilTerm } from './helper-process.js';
import { benchSesClient } from './ses-client.js';

interface PeerJob {
  from: string;
  to: string;
  subject: string;
  html: string;
  text: string;
}

const [url, prefix, sandboxUrl, concurrency] = process.argv.slice(2) as [string, string, string, string];
const connection = new Redis(url, { maxRetriesPerRequest: null });
const ses = benchSesClient(sandboxUrl, Number(concurrency));
const worker = new Worker<PeerJob>(
  'peer',
  async (job) => {
    const m = job.data;
    await ses.send(
      new SendEmailCommand({
        FromEmailAddress: m.from,
        Destination: { ToAddresses: [m.to] },
        Content: {
          Simple: {
            Subject: { Data: m.subject },
            Body: { Html: { Data: m.html }, Text: { Data: m.text } },
          },
        },
        EmailTags: [{ Name: 'sluice_id', Value: job.id ?? '' }],
      }),
    );
  },
  { connection, prefix, concurrency: Number(concurrency), removeOnComplete: { count: 0 } },
);
await worker.waitUntilReady();
readyUntilTerm([worker], connection);
