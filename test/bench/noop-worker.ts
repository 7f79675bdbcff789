// The baseline's consumer: a bare BullMQ Worker with a no-op processor.
// Usage: noop-worker.ts <redisUrl> <prefix> <queue> <concurrency>
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { readyUntilTerm } from './helper-process.js';

const [url, prefix, queue, concurrency] = process.argv.slice(2) as [string, string, string, string];
const connection = new Redis(url, { maxRetriesPerRequest: null });
const worker = new Worker(queue, async () => undefined, { connection, prefix, concurrency: Number(concurrency) });
await worker.waitUntilReady();
readyUntilTerm([worker], connection);
