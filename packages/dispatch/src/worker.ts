import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  INTAKE_JOB_OPTIONS,
  PRIORITY_CLASSES,
  QUEUE_OPTIONS,
  expiresAt,
  createKeys,
  jobIdOf,
  receiverNamed,
  type DispatchJobData,
  type IntakeJobData,
  type RetryCounts,
  type SluiceConfig,
} from '@sluice/core';
import { createProviders, messageIdHeader, type Outcome, type Provider } from '@sluice/providers';
import { createStore } from '@sluice/store';
import { createAdjustments, createLimiter, createSignals, createSlots, quotaLayers, type OverrideState, type SignalKey, type Slots } from '@sluice/throttle';
import { SlotGate } from './gate.js';
import { createLatency } from './latency.js';
import { replyMatcher } from './reply-match.js';
import { planRetry } from './retry.js';
import { route } from './routing.js';

/** Options of {@link createWorker}. */
export interface WorkerOptions {
  config: SluiceConfig;
  logger: Logger;
  /** Adapters by provider id. @defaultValue one per configured provider */
  providers?: Map<string, Provider>;
}

/** A worker process's engine: stateless, scaled horizontally. */
export interface SluiceWorker {
  start(): Promise<void>;
  /** Stops fetching, lets in-flight sends finish (up to `worker.drainTimeoutMs`), gives slots back. */
  close(): Promise<void>;
}

/**
 * Consumes the dispatch queues: takes a connection slot, sends, and turns the outcome
 * into exactly one final state or a delayed retry.
 */
export function createWorker(options: WorkerOptions): SluiceWorker {
  const { config, logger } = options;
  const keys = createKeys(config.redis.prefix);
  const redis = new Redis(config.redis.url, { maxRetriesPerRequest: null });
  const store = createStore({ redis, keys, recordTtlSeconds: config.delivery.recordTtlSeconds });
  const limiter = createLimiter({ redis, reserves: config.reserves, jitterSlackMs: config.jitterSlackMs });
  const adjustments = createAdjustments({ redis, keys, backpressure: config.backpressure });
  // Written four times a second: the governor's reaction time starts here.
  const signals = createSignals({ redis, keys, flushMs: 250 });
  const latency = createLatency({ redis, keys });
  const matches = replyMatcher(config.governor.rules);
  const providers = options.providers ?? createProviders(config);
  /** Failures without an answer (or 5xx) in a row, per provider, in this process. */
  const failingInARow = new Map<string, number>();
  const holder = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const want = PRIORITY_CLASSES.reduce((n, p) => n + config.worker.concurrency[p], 0);
  const gates = new Map<string, SlotGate>();
  const slots = new Map<string, Slots>();
  const workers = new Map<string, Worker>();
  const intakeQueues = new Map<string, Queue>();
  for (const [id, p] of Object.entries(config.providers)) {
    const gate = new SlotGate(config.worker.concurrency.critical);
    gates.set(id, gate);
    const onChange = (n: number): void => {
      gate.resize(n);
      rescale();
    };
    // Short leases: a share freed by a stopped worker, or owed to a new one, moves within a second.
    slots.set(id, createSlots({ redis, key: keys.slots(id), holdersKey: keys.slotHolders(id), limit: p.concurrency, holder, want, leaseMs: 3_000, onChange }));
  }

  /**
   * Fetch no more than the slots held can send: non-critical concurrency follows this
   * process's share of the slots, and with none held it stops fetching, so jobs wait in
   * the queue for a process that can send them rather than sit here.
   */
  function rescale(): void {
    const held = [...slots.values()].reduce((n, s) => n + s.held, 0);
    for (const p of PRIORITY_CLASSES) {
      const worker = workers.get(p);
      if (!worker) continue;
      const configured = config.worker.concurrency[p];
      // Critical keeps its full concurrency: the gate reserves permits for it.
      if (p !== 'critical') worker.concurrency = Math.max(1, Math.min(configured, Math.ceil((held * configured) / want)));
      if (held === 0 && !worker.isPaused()) void worker.pause(true);
      else if (held > 0 && worker.isPaused()) void worker.resume();
    }
  }

  /**
   * Gives a message back to its intake queue, to be admitted again (after `delayMs`): its
   * campaign was paused after admission, it came late and its quotas are busy now, or it
   * is to be retried, in which case it goes through every quota check again at the
   * rates lowered meanwhile. Record first, then job: this dispatch job stays until we
   * return, so a crash in between runs it again, and the intake job never finds a record
   * that says it was dispatched.
   */
  async function readmit(
    m: DispatchJobData,
    reason: string,
    retry?: { delayMs: number; counts: RetryCounts; outcome: Exclude<Outcome, { kind: 'accepted' | 'rejected' }> },
  ): Promise<void> {
    const name = m.campaignId !== undefined ? keys.campaignQueue(m.campaignId) : keys.intakeQueue(m.priority);
    let queue = intakeQueues.get(name);
    if (!queue) {
      queue = new Queue(name, { ...QUEUE_OPTIONS, connection: redis, prefix: keys.prefix, defaultJobOptions: { ...INTAKE_JOB_OPTIONS } });
      intakeQueues.set(name, queue);
    }
    const { provider: _p, receiver: _r, admittedAt: _a, decidedAt: _d, failover: _f, ticket: _t, ...message } = m;
    const hop = (m.hop ?? 0) + 1;
    const data: IntakeJobData = retry ? { ...message, hop, retry: retry.counts } : { ...message, hop };
    if (retry) {
      const family = retry.outcome.kind === 'ambiguous' ? 'ambiguous' : retry.outcome.family;
      await store.transition(m.id, 'retrying', { fields: { lastReply: retry.outcome.reply.slice(0, 2000), lastOutcome: family, retryAt: String(Date.now() + retry.delayMs) } });
    } else {
      await store.transition(m.id, 'queued', { fields: { lastOutcome: reason } });
    }
    await queue.add('send', data, { jobId: jobIdOf(data), ...(retry ? { delay: retry.delayMs } : {}) });
  }

  /**
   * A late message's second admission: granted → send now (true); booked → wait in this
   * queue for the new slot; denied → back to its intake queue.
   */
  async function readmitLate(job: Job<DispatchJobData>, token: string | undefined): Promise<boolean> {
    const m = job.data;
    const campaign = m.campaignId !== undefined ? await store.campaignLimit(m.campaignId) : undefined;
    // The bucket the scheduler chose (by the domain's organisation), by name: no DNS here.
    const receiver = receiverNamed(config, m.receiver);
    const { layers } = quotaLayers(config, keys, { to: m.to, tenantId: m.tenantId, campaign, provider: m.provider, receiver }, adjustments);
    const decision = await limiter.admit({ layers, priority: m.priority, horizonMs: config.horizonsMs[m.priority], waitlist: [] });
    if (decision.outcome === 'granted') return true;
    if (decision.outcome === 'denied') {
      await readmit(m, `slot missed by ${Date.now() - m.admittedAt} ms: admitted again`);
      return false;
    }
    const at = Date.now() + decision.waitMs;
    await job.updateData({ ...m, admittedAt: at, decidedAt: Date.now() });
    await job.moveToDelayed(at, token);
    throw new DelayedError();
  }

  /**
   * After a temporary failure: another attempt through admission after the family's
   * backoff, or a final state when the attempts or the message's lifetime are used up.
   */
  async function retryOrEnd(m: DispatchJobData, outcome: Exclude<Outcome, { kind: 'accepted' | 'rejected' }>, log: (action: string) => Promise<void>): Promise<void> {
    const base = { campaignId: m.campaignId, provider: m.provider, reply: outcome.reply };
    const family = outcome.kind === 'ambiguous' ? 'ambiguous' : outcome.family;
    const plan = planRetry(config, family, m.retry, outcome.kind === 'ambiguous' ? undefined : outcome.retryAfterMs);
    if (!plan.retry) {
      await log(`final: rejected (${plan.why})`);
      await store.finalize(m.id, 'rejected', { ...base, outcome: plan.why });
      return;
    }
    if (Date.now() + plan.delayMs >= expiresAt(m, config.delivery.lifetimeMs)) {
      await log('final: expired');
      await store.finalize(m.id, 'expired', { ...base, outcome: `${family}: lifetime over before the next attempt` });
      return;
    }
    await log(`retry in ${plan.delayMs} ms`);
    await readmit(m, family, { ...plan, outcome });
  }

  /**
   * What a reply says about the key it came from: a throttle lowers that key's rate for
   * every process; a daily quota pauses the provider; failures without an answer in a row,
   * or an account that stopped sending, mark the provider down so routing fails over.
   */
  const poolOf = (provider: string): string => config.providers[provider]?.pool ?? 'default';
  const circuitOf = (receiver: string, provider: string, stream: string): string => `${receiver}|${poolOf(provider)}|${stream}`;

  /** Counts an attempt's outcome for every key it belongs to (what the governor reads). */
  function count(m: DispatchJobData, outcome: Outcome): void {
    const on: SignalKey[] = [
      { kind: 'provider', name: m.provider },
      { kind: 'receiver', name: m.receiver },
      { kind: 'pool', name: poolOf(m.provider) },
      { kind: 'stream', name: m.stream },
      { kind: 'tenant', name: m.tenantId },
    ];
    if (m.campaignId !== undefined) on.push({ kind: 'campaign', name: m.campaignId });
    on.push({ kind: 'circuit', name: circuitOf(m.receiver, m.provider, m.stream) });
    signals.record(on, 'attempted');
    if (outcome.kind !== 'accepted') {
      for (const rule of matches({ reply: outcome.reply, family: outcome.kind === 'ambiguous' ? undefined : outcome.family })) signals.record(on, `matched:${rule}`);
    }
    if (outcome.kind === 'rejected') signals.record(on, `rejected:${outcome.family}`);
    if (outcome.kind === 'throttled') {
      // A throttle counts against whoever refused: a receiver's 421 says nothing about the
      // provider (or pool) that carried it, and a provider's 429 nothing about the receiver.
      // For those keys it is a deferral by family (a receiver throttling a cold pool's IPs
      // is still what the pool's warm-up judges).
      const refusedBy = outcome.scope === 'provider' ? ['receiver'] : ['provider', 'pool'];
      signals.record(on.filter((k) => !refusedBy.includes(k.kind)), 'throttled');
      signals.record(on.filter((k) => refusedBy.includes(k.kind)), 'deferred:throttled');
    } else if (outcome.kind === 'accepted' || outcome.kind === 'rejected') signals.record(on, outcome.kind);
    else signals.record(on, `deferred:${outcome.kind === 'ambiguous' ? 'ambiguous' : outcome.family}`);
    // A recipient's first temporary failure (its job has no retry of any family yet): the
    // deferred recipients, each once, beside the deferred attempts.
    if (outcome.kind !== 'accepted' && outcome.kind !== 'rejected' && Object.keys(m.retry?.byFamily ?? {}).length === 0) {
      signals.record(on, 'recipient_deferred');
    }
  }

  async function learn(m: DispatchJobData, outcome: Outcome): Promise<void> {
    count(m, outcome);
    if (outcome.kind === 'accepted') {
      failingInARow.delete(m.provider);
      return;
    }
    if (outcome.kind === 'throttled') {
      if (outcome.family === 'quota_exhausted') {
        // Until the next GetAccount reading says whether the rolling window has room again.
        const provider = config.providers[m.provider];
        const untilMs = Date.now() + Math.max(outcome.retryAfterMs ?? 0, provider?.kind === 'ses' ? provider.quotaRefreshMs : 60_000);
        await adjustments.pause(m.provider, untilMs, outcome.reply);
        logger.warn({ provider: m.provider, until: new Date(untilMs).toISOString() }, 'provider out of quota: paused');
        return;
      }
      const key = outcome.scope === 'provider' ? keys.bucket('provider', m.provider) : keys.bucket('receiver', m.receiver);
      // A key the governor has set is the governor's to pace.
      if (config.governor.enabled && adjustments.governed(key) !== undefined) return;
      const { cut, factor } = await adjustments.slowDown(key);
      if (cut) logger.info({ provider: m.provider, receiver: m.receiver, scope: outcome.scope, factor, reply: outcome.reply.slice(0, 200) }, 'throttled: rate lowered');
      return;
    }
    // The provider itself failing: no answer at all, or an HTTP 5xx. (A receiver's 4xx
    // relayed by an SMTP smarthost says nothing about the smarthost.)
    const noAnswer = outcome.kind === 'ambiguous' || outcome.rule === 'net.no-response' || outcome.rule === 'http.5xx';
    if (outcome.kind === 'deferred' && outcome.family === 'sender_config') {
      await adjustments.markDown(m.provider, config.failover.downForMs, outcome.reply);
      logger.error({ provider: m.provider, reply: outcome.reply.slice(0, 300) }, 'provider refuses the account: marked down');
    } else if (noAnswer) {
      const n = (failingInARow.get(m.provider) ?? 0) + 1;
      failingInARow.set(m.provider, n);
      if (n >= config.failover.downAfter) {
        failingInARow.delete(m.provider);
        await adjustments.markDown(m.provider, config.failover.downForMs, `${n} failures in a row: ${outcome.reply}`);
        logger.error({ provider: m.provider, failures: n }, 'provider failing: marked down');
      }
    }
  }

  function rerouted(m: DispatchJobData): boolean {
    const choice = route(config, adjustments, (p) => keys.bucket('provider', p), m.stream);
    return !('provider' in choice) || choice.provider !== m.provider;
  }

  function loweredSince(m: DispatchJobData): boolean {
    const decided = m.decidedAt ?? m.admittedAt;
    const at = Math.max(adjustments.loweredAt(keys.bucket('receiver', m.receiver)) ?? 0, adjustments.loweredAt(keys.bucket('provider', m.provider)) ?? 0);
    return at > decided;
  }

  /** A `suspend` override in force on any key the message goes through, if one is. */
  function suspendedBy(m: DispatchJobData): OverrideState | undefined {
    const on = [
      keys.bucket('provider', m.provider),
      keys.bucket('receiver', m.receiver),
      keys.bucket('pool', poolOf(m.provider)),
      keys.bucket('tenant', m.tenantId),
      ...(m.campaignId !== undefined ? [keys.bucket('campaign', m.campaignId)] : []),
    ];
    return on.map((k) => adjustments.override(k)).find((o) => o?.kind === 'suspend');
  }

  /** Records one attempt in the message's attempt log. */
  async function logAttempt(m: DispatchJobData, outcome: Outcome, action: string): Promise<void> {
    const classified = outcome.kind === 'accepted' || outcome.kind === 'ambiguous' ? {} : { family: outcome.family, rule: outcome.rule, classifier: outcome.version };
    await store.logAttempt(m.id, { at: Date.now(), provider: m.provider, outcome: outcome.kind, reply: outcome.reply, ...classified, action });
  }

  async function handle(job: Job<DispatchJobData>, token: string | undefined): Promise<void> {
    const m = job.data;
    const provider = providers.get(m.provider);
    const gate = gates.get(m.provider);
    if (!provider || !gate) throw new Error(`no provider ${m.provider} configured in this worker`);
    const base = { campaignId: m.campaignId, provider: m.provider };

    // Paused (out of its daily quota) or down since admission: back to admission, which
    // routes elsewhere or waits; no attempt is spent. A down provider with nothing better
    // in its route is still tried (its backoff paces it).
    const standing = adjustments.standing(m.provider);
    if (standing.state === 'paused' || (standing.state === 'down' && rerouted(m))) {
      await readmit(m, `provider ${m.provider} ${standing.state}: ${standing.reason}`);
      return;
    }

    const release = await gate.acquire(m.priority);
    let outcome: Outcome;
    let attempt: number;
    try {
      // Here (with its connection slot) well after its slot, because no worker was free or
      // none ran: sending now would add to a later second's sends, so it asks the limiter
      // again. Only a first try nobody has started: one cut off by a crash goes on below.
      // Admitted at a rate that has since been lowered (a throttle came back for its
      // receiver or provider): the limiter decides again at the lowered rate, so the
      // messages behind a throttle wait instead of meeting the same refusal.
      if (Date.now() - m.admittedAt > config.worker.lateAfterMs || loweredSince(m)) {
        const late = await store.transition(m.id, 'dispatched', { from: 'dispatched' });
        if (late.result === 'moved' && !(await readmitLate(job, token))) return;
      }
      // Suspended by an operator since admission: back to admission, which holds it until
      // the override ends (as a paused campaign's mail, below). No attempt is spent.
      const suspended = suspendedBy(m);
      if (suspended !== undefined) {
        await readmit(m, `suspended: ${suspended.scope} ${suspended.name}`.slice(0, 60));
        return;
      }
      let t = await store.transition(m.id, 'sending', { attempt: true, campaignId: m.campaignId });
      if (t.result === 'missing') {
        await store.accept(m);
        t = await store.transition(m.id, 'sending', { attempt: true, campaignId: m.campaignId });
      }
      if (t.result === 'final') return; // sent, cancelled or expired already: never twice
      if (t.result === 'held') {
        await readmit(m, 'held: campaign paused');
        return;
      }
      attempt = t.attempts;
      if (t.ambiguous && config.delivery.onAmbiguous[m.priority] === 'assume-sent') {
        await store.finalize(m.id, 'sent', { ...base, receiver: m.receiver, outcome: 'ambiguous', reply: 'the previous attempt was submitted but its answer was lost with its worker; counted as sent (delivery.onAmbiguous)' });
        return;
      }
      const expiry = expiresAt(m, config.delivery.lifetimeMs);
      if (Date.now() >= expiry) {
        await store.finalize(m.id, 'expired', { ...base, reply: 'expired before sending' });
        return;
      }
      let submitted: Promise<unknown> = Promise.resolve();
      outcome = await provider.send(m, {
        messageIdHeader: messageIdHeader(m),
        onSubmitted: () => {
          submitted = store.transition(m.id, 'submitted');
        },
      });
      await submitted;
    } finally {
      release();
    }

    await learn(m, outcome);
    // Each attempt's log entry is written before the state it leads to, so whoever sees
    // the message final (or retrying) sees its whole log.
    const log = (action: string): Promise<void> => logAttempt(m, outcome, action);
    switch (outcome.kind) {
      case 'accepted':
        // No reply text on success: the provider's id says it, and every value under 64
        // bytes keeps the record a small listpack (DESIGN.md, BullMQ facts). A first
        // attempt's success is in the record alone; after failures the log tells the story.
        if (attempt > 1) await log('final: sent');
        if (await store.finalize(m.id, 'sent', { ...base, receiver: m.receiver, outcome: 'accepted', providerMessageId: outcome.providerMessageId })) {
          latency.record(m.priority, Date.now() - m.acceptedAt);
        }
        return;
      case 'rejected':
        await log(outcome.suppress ? 'final: rejected, recipient suppressed' : 'final: rejected');
        await store.finalize(m.id, 'rejected', { ...base, outcome: outcome.family, reply: outcome.reply, suppress: outcome.suppress, to: m.to, tenantId: m.tenantId });
        return;
      case 'ambiguous':
        await store.transition(m.id, 'submitted', { ambiguous: true });
        if (config.delivery.onAmbiguous[m.priority] === 'assume-sent') {
          await log('final: counted as sent (delivery.onAmbiguous: assume-sent)');
          await store.finalize(m.id, 'sent', { ...base, receiver: m.receiver, outcome: 'ambiguous', reply: outcome.reply });
          return;
        }
        // Resent with the same Message-ID (delivery.onAmbiguous: resend).
        await retryOrEnd(m, outcome, log);
        return;
      case 'throttled':
      case 'deferred':
        await retryOrEnd(m, outcome, log);
        return;
    }
  }

  return {
    async start() {
      for (const p of providers.values()) {
        const result = await p.check();
        if (result.ok) logger.info({ provider: p.id, sandbox: p.sandbox }, result.detail);
        else logger.warn({ provider: p.id }, `provider check failed: ${result.error}`);
      }
      await adjustments.start();
      for (const s of slots.values()) await s.start();
      for (const p of PRIORITY_CLASSES) {
        const worker = new Worker<DispatchJobData>(keys.dispatchQueue(p), handle, {
          connection: redis,
          prefix: keys.prefix,
          concurrency: config.worker.concurrency[p],
          lockDuration: config.worker.lockDurationMs,
          stalledInterval: config.worker.stalledIntervalMs,
          maxStalledCount: 1_000_000,
        });
        worker.on('error', (err) => logger.error({ err, queue: worker.name }, 'worker error'));
        worker.on('failed', (job, err) => logger.warn({ err, id: job?.id }, 'dispatch job failed; BullMQ retries it'));
        workers.set(p, worker);
      }
      rescale();
    },
    async close() {
      const drain = Promise.all([...workers.values()].map((w) => w.close()));
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), config.worker.drainTimeoutMs).unref());
      if ((await Promise.race([drain, timeout])) === 'timeout') {
        logger.warn('drain timed out; in-flight jobs go back to the queue');
        await Promise.all([...workers.values()].map((w) => w.close(true)));
      }
      for (const s of slots.values()) await s.close();
      adjustments.close();
      await signals.close();
      await latency.close();
      for (const p of providers.values()) await p.close();
      for (const q of intakeQueues.values()) await q.close();
      await redis.quit();
    },
  };
}
