import { createClient } from '@sluice/client';
import { createKeys, loadConfig } from '@sluice/core';
import { connectRedis, createRedisHealth, type RedisHealthLogger } from '@sluice/store';
import { createOtpLatency } from './otp-latency.js';
import { createProducer } from './producer.js';
import { DEMO_DOMAINS } from './recipients.js';
import { createStatusReader, formatStatus } from './status.js';

const NEWSLETTER_SIZE = 20_000;
const CHUNK_SIZE = 1_000;
const OTP_INTERVAL_MS = 250;

// stdout carries the status lines (what `npm start` shows); problems go to stderr.
const say = (line: string): void => void process.stdout.write(`${line}\n`);
const warn = (line: string): void => void process.stderr.write(`demo: ${line}\n`);
const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
// The demo's lines are for a person, not a log shipper: Redis's comings and goings in its own words.
const redisLines: RedisHealthLogger = {
  info: (_, msg) => warn(msg),
  warn: (_, msg) => warn(msg),
  error: (_, msg) => warn(msg),
};

async function main(): Promise<void> {
  const config = loadConfig();
  const keys = createKeys(config.redis.prefix);
  const client = createClient({ redis: config.redis.url, prefix: config.redis.prefix });
  // The client's connection is its own; status reads get one of ours, which says when Redis
  // is away (once) and back. Without Redis the demo waits for it.
  const health = createRedisHealth({ url: config.redis.url, logger: redisLines });
  const redis = connectRedis(config.redis.url, { maxRetriesPerRequest: 3, health });
  await health.ready();
  const campaign = await client.campaigns.create({ name: 'newsletter', priority: 'low' });
  const otps = createOtpLatency({ messages: client.messages });
  const producer = createProducer({
    client,
    campaignId: campaign.id,
    recipients: NEWSLETTER_SIZE,
    chunkSize: CHUNK_SIZE,
    otpIntervalMs: OTP_INTERVAL_MS,
    onOtp: (id, sentAt) => otps.track(id, sentAt),
    onOtpError: (error) => {
      if (!health.explains(error)) warn(`an OTP was not enqueued: ${describe(error)}`);
    },
  });
  const status = createStatusReader({
    config,
    keys,
    redis,
    client,
    campaignId: campaign.id,
    domains: DEMO_DOMAINS.map((d) => d.domain),
  });
  const startedAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let reading: Promise<void> = Promise.resolve();
  let stopping = false;

  const stop = async (code: number): Promise<never> => {
    stopping = true;
    clearTimeout(timer);
    await producer.close();
    await reading;
    await otps.close();
    try {
      // So that a later run on the same Redis does not inherit this newsletter's backlog.
      await client.campaigns.pause(campaign.id);
      say(`demo: stopped; newsletter ${campaign.id} paused`);
    } catch (error) {
      warn(`could not pause newsletter ${campaign.id}: ${describe(error)}`);
    }
    await status.close();
    health.close();
    await redis.quit();
    await client.close();
    process.exit(code);
  };
  const onSignal = (): void => {
    if (stopping) return;
    void stop(0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  say(
    `demo: newsletter ${campaign.id}: enqueueing ${NEWSLETTER_SIZE} messages (sendBulk of ${CHUNK_SIZE}); ` +
      `an OTP every ${OTP_INTERVAL_MS} ms`,
  );
  producer.startOtps();
  producer.enqueueNewsletter().then(
    (n) => {
      if (!stopping)
        say(`demo: newsletter enqueued: ${n} messages in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    },
    (error: unknown) => {
      warn(`enqueueing the newsletter failed: ${describe(error)}`);
      if (!stopping) void stop(1);
    },
  );

  // One line just after each second ends, so the second it reports is complete.
  const tick = (): void => {
    timer = setTimeout(
      () => {
        const at = Date.now();
        reading = status
          .read(at)
          .then((r) => {
            if (!stopping) say(formatStatus(at - startedAt, r, otps.summary(at)));
          })
          .catch((error: unknown) => {
            // Redis away: said once, by the health reporter.
            if (!health.explains(error)) warn(`status unavailable: ${describe(error)}`);
          })
          .finally(() => {
            if (!stopping) tick();
          });
      },
      1050 - (Date.now() % 1000),
    );
  };
  tick();
}

main().catch((error: unknown) => {
  warn(describe(error));
  process.exit(1);
});
