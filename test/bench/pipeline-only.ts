import { benchPipeline } from './pipeline.js';
import { startRedisServer } from '../support/redis-server.js';
const server = await startRedisServer();
for (let i = 0; i < 2; i++) {
  const r = await benchPipeline(server.url, 3000);
  console.log(JSON.stringify({ perSec: Math.round(r.messagesPerSec), bullmq: Math.round(r.bullmqOneHopPerSec), sdk: Math.round(r.sdkAlonePerSec), ratio: r.ratio.toFixed(3) }));
}
await server.stop();
