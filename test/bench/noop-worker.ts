// The baseline's consumer: a bare BullMQ Worker with a no-op processor.
// Usage: noop-worker.ts <redisUrl> <prefix> <queue> <concurrency>
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

const [url, prefix, queue, concurrency] = process.argv.slice(2) as [string, string, string, string];
const connection = new Redis(url, { maxRetriesPerRequest: null });
const worker = new Worker(queue, async () => undefined, { connection, prefix, concurrency: Number(concurrency) });
await worker.waitUntilReady();
console.log(JSON.stringify({ event: 'ready' }));
process.on('SIGTERM', () => {
  void worker
    .close()
    .then(() => connection.quit())
    .then(() => process.exit(0));
});
