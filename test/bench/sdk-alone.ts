// The ESP call on its own: the real SES client sending `count` messages, 32 at a time, to a
// sandbox of another process. Prints { event: 'done', cpuMicros } (this process's CPU).
// Usage: sdk-alone.ts <sandboxUrl> <count>
import { benchEmail, benchSesClient } from './ses-client.js';

const [url, count] = process.argv.slice(2) as [string, string];
const total = Number(count);
const client = benchSesClient(url, 32);
await client.send(benchEmail(-1, true));
const before = process.cpuUsage();
let next = 0;
await Promise.all(
  Array.from({ length: 32 }, async () => {
    while (next < total) await client.send(benchEmail(next++, true));
  }),
);
const used = process.cpuUsage(before);
client.destroy();
console.log(JSON.stringify({ event: 'done', cpuMicros: used.user + used.system }));
