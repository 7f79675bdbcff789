// The ESP call on its own: the real SES client sending `count` messages, 32 at a time, to a
// sandbox of another process. Prints { event: 'done', cpuMicros } (this process's CPU).
// Usage: sdk-alone.ts <sandboxUrl> <count>
import { Agent } from 'node:http';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';

const [url, count] = process.argv.slice(2) as [string, string];
const total = Number(count);
const client = new SESv2Client({
  region: 'us-east-1',
  endpoint: url,
  credentials: { accessKeyId: 'BENCH', secretAccessKey: 'bench' },
  maxAttempts: 1,
  requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets: 32 }) },
});
const input = (i: number) => ({
  FromEmailAddress: 'bench@acme.test',
  Destination: { ToAddresses: [`r${i}@d${i % 50}.test`] },
  Content: { Simple: { Subject: { Data: 'bench' }, Body: { Text: { Data: 'hello' } } } },
  EmailTags: [{ Name: 'sluice_id', Value: `m${i}` }],
});
await client.send(new SendEmailCommand(input(-1)));
const before = process.cpuUsage();
let next = 0;
await Promise.all(
  Array.from({ length: 32 }, async () => {
    while (next < total) await client.send(new SendEmailCommand(input(next++)));
  }),
);
const used = process.cpuUsage(before);
client.destroy();
console.log(JSON.stringify({ event: 'done', cpuMicros: used.user + used.system }));
