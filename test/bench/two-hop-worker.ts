// The cost baseline's consumer: bare BullMQ moving each job through two queues. Its `hop1`
// processor adds the job's data to `hop2`; its `hop2` processor does nothing.
// Usage: two-hop-worker.ts <redisUrl> <prefix> <concurrency>
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';

const [url, prefix, concurrency] = process.argv.slice(2) as [string, string, string];
const connection = new Redis(url, { maxRetriesPerRequest: null });
const next = new Queue('hop2', { connection, prefix });
const options = { connection, prefix, concurrency: Number(concurrency) };
const workers = [
  new Worker('hop1', async (job) => void (await next.add('send', job.data)), options),
  new Worker('hop2', async () => undefined, options),
];
await Promise.all(workers.map((w) => w.waitUntilReady()));
console.log(JSON.stringify({ event: 'ready' }));
process.on('SIGTERM', () => {
  void Promise.all(workers.map((w) => w.close()))
    .then(() => next.close())
    .then(() => connection.quit())
    .then(() => process.exit(0));
});
