import type { PriorityClass } from './priority.js';

/**
 * Every queue name and Redis key Sluice uses, built in one place. They outlive
 * deployments: never rename one without a migration.
 *
 * BullMQ forbids `:` in queue names, so the queues are named `campaign-<id>`, `intake-<class>`
 * and `dispatch-<class>`.
 */
export interface Keys {
  /** The BullMQ key prefix (queue keys are `<prefix>:<queue>:…`). */
  readonly prefix: string;
  /** Intake queue of transactional mail of one class. */
  intakeQueue(priority: PriorityClass): string;
  /** A campaign's own intake queue. */
  campaignQueue(campaignId: string): string;
  /** Admitted work of one class, consumed by workers. */
  dispatchQueue(priority: PriorityClass): string;
  /** One quota layer's bucket (a hash of GCRA slices). All share the limiter hash tag. */
  bucket(layer: LayerKind, name: string): string;
  /** A provider's connection-slot semaphore (sorted set of leases). */
  slots(provider: string): string;
  /**
   * A receiver's connection slots as an adjustments entry (no key of its own): what "too many
   * connections" lowers, beside the receiver's rate (`bucket('receiver', …)`).
   */
  receiverConnections(receiver: string): string;
  /** The live holders of a provider's slots (sorted set by expiry), for fair shares. */
  slotHolders(provider: string): string;
  /** A message's record: state, attempts, last reply. */
  message(id: string): string;
  /** A tenant's suppression list (hash: lower-cased address → `source|at|provider|reason`). */
  suppression(tenantId: string): string;
  /** A campaign's settings and counters. */
  campaign(campaignId: string): string;
  /** A campaign's content (JSON string), stored once for every recipient. */
  campaignContent(campaignId: string): string;
  /** A campaign's injection cursor (string `<position>|<backend cursor value>`): every recipient before it is accepted. */
  campaignCursor(campaignId: string): string;
  /** Set of the active campaigns' ids (an archived campaign leaves it). */
  campaigns(): string;
  /**
   * The campaigns with work (sorted set id → mark count): whoever adds a job to a campaign's
   * queue bumps its mark; a scheduler's poll reads only these and prunes an idle one only if
   * its mark did not move meanwhile (`prune-work-1.lua`).
   */
  campaignsWithWork(): string;
  /** The archived campaigns (sorted set id → archived at, epoch ms); each record is its campaign hash, with a TTL. */
  archivedCampaigns(): string;
  /** Archived campaigns whose queue is not removed yet (set): the leader's archive chore finishes them. */
  campaignsArchiving(): string;
  /**
   * Effective-rate adjustments and provider states every scheduler reads (hash): a lowered
   * rate per layer key after throttles, the SES quota cap, down and paused providers.
   */
  adjustments(): string;
  /** A message's attempt log (list of JSON entries): reply, family, classifier version. */
  attempts(id: string): string;
  /** A tenant's address's full-mailbox rejections (sorted set message id → ms), within `suppression.mailboxFull.windowMs`. */
  mailboxFull(tenantId: string, address: string): string;
  /** Soft bounces of one address of a tenant (sorted set of event ids by time), for the window. */
  softBounces(tenantId: string, address: string): string;
  /** Marks an ESP event applied (string with a TTL), so the ESP's retries of it change nothing. */
  feedbackEvent(provider: string, eventId: string): string;
  /** Marks an ESP event's bounce or complaint counted in the signals (string with a TTL): counted once. */
  feedbackSignal(provider: string, eventId: string): string;
  /** Marks a webhook token seen (string with a TTL): a replayed signed request is refused. */
  webhookToken(provider: string, token: string): string;
  /** Outcome counts of one key in one time bucket (hash field → count), for the signals. */
  signals(kind: string, name: string, bucketStart: number): string;
  /** Names that had signals of one kind lately (set), for the governor to visit. */
  signalIndex(kind: string): string;
  /** Probes let through a half-open circuit in one period (counter). */
  circuitProbes(circuit: string, period: number): string;
  /** Which scheduler's governor acts (a lease). */
  governorLeader(): string;
  /** Every governor decision with its inputs, rule and version (a capped stream). */
  governorLog(): string;
  /** The latest replies the classifier could not read (family `unknown`), newest last (a capped stream). */
  unknownReplies(): string;
  /** A warming pool's day so far (hash): the signals counted into it and up to when. */
  warmup(pool: string): string;
  /** Recent send latencies of one class, ms (a capped list the workers write, the status reads). */
  latency(priority: PriorityClass): string;
  /** Outcome totals folded from the signals for the status (hash; `upTo` is where it stops). */
  opsOutcomes(): string;
  /** What a warming pool sent per receiver on the day that began at `dayStart` (hash receiver → count). */
  warmupSent(pool: string, dayStart: number): string;
  /**
   * Every operator override set, cleared or expired (a capped stream). Under the limiter's
   * hash tag: it is written in one MULTI (or script) with the adjustments hash.
   */
  audit(): string;
  /**
   * Every final state and first deferral, for backends' consumer groups (a stream, trimmed
   * to what every group has acknowledged; docs/design/outcomes.md).
   */
  outcomes(): string;
  /**
   * The compact records of one block of 64 positions of an injected campaign (a hash kept a
   * listpack: field `2·slot` state, time and provider, `2·slot+1` the provider's message id).
   */
  compactRecords(campaignId: string, block: number): string;
  /**
   * The positions of an injected campaign whose records are gone (`until-acknowledged`): a
   * bitmap, one bit a recipient, so injecting one again is still refused.
   */
  goneRecords(campaignId: string): string;
  /**
   * A campaign's launch (hash): `record` (the request with its forecast, and once decided the
   * decision with its projections, JSON), `gate` (the small JSON the injection reads before
   * every chunk), `summary` (what the status shows) and `v` (the version each write checks).
   */
  launch(campaignId: string): string;
  /** Campaign ids whose launch the governor leader decides or re-checks (set). */
  launches(): string;
  /** When an ESP event was last applied, per provider (hash provider → epoch ms): the suppression feed's freshness. */
  feedApplied(): string;
  /**
   * The fleet's heartbeat: each live process's last beat (sorted set process id → epoch ms).
   * Under the fleet's hash tag, with {@link Keys.fleetProcesses}: one beat writes both.
   */
  fleetBeats(): string;
  /** What each process of the fleet is (hash process id → JSON: role, version, schema, sandbox providers). */
  fleetProcesses(): string;
  /** Messages accepted while no scheduler ran (hash: `count`, `firstAt`, `lastAt`), until a scheduler starts. */
  fleetUnscheduled(): string;
}

/** The quota layers, in check order. */
export const LAYER_KINDS = ['provider', 'receiver', 'pool', 'campaign', 'tenant'] as const;
/** A quota layer. */
export type LayerKind = (typeof LAYER_KINDS)[number];

const LAYER_TAG: Record<LayerKind, string> = {
  provider: 'p',
  receiver: 'r',
  pool: 'i',
  campaign: 'c',
  tenant: 't',
};

/**
 * Key builders for a deployment.
 * @param prefix - namespace of every key. @defaultValue `'sluice'`
 */
export function createKeys(prefix = 'sluice'): Keys {
  // One hash tag for every limiter key, so the multi-key script also runs on Cluster.
  const limiter = `{${prefix}:rl}`;
  return {
    prefix,
    intakeQueue: (p) => `intake-${p}`,
    campaignQueue: (id) => `campaign-${id}`,
    dispatchQueue: (p) => `dispatch-${p}`,
    bucket: (layer, name) => `${limiter}:${LAYER_TAG[layer]}:${name}`,
    slots: (provider) => `${limiter}:slots:${provider}`,
    receiverConnections: (receiver) => `${limiter}:conn:${receiver}`,
    slotHolders: (provider) => `${limiter}:holders:${provider}`,
    message: (id) => `${prefix}:msg:${id}`,
    suppression: (tenantId) => `${prefix}:sup:${tenantId}`,
    campaign: (id) => `${prefix}:campaign:${id}`,
    campaignContent: (id) => `${prefix}:campaign:${id}:content`,
    campaignCursor: (id) => `${prefix}:campaign:${id}:cursor`,
    campaigns: () => `${prefix}:campaigns`,
    campaignsWithWork: () => `${prefix}:campaigns:work`,
    archivedCampaigns: () => `${prefix}:campaigns:archived`,
    campaignsArchiving: () => `${prefix}:campaigns:archiving`,
    adjustments: () => `${limiter}:adjust`,
    attempts: (id) => `${prefix}:attempts:${id}`,
    softBounces: (tenantId, address) => `${prefix}:soft:${tenantId}:${address}`,
    mailboxFull: (tenantId, address) => `${prefix}:mbfull:${tenantId}:${address}`,
    feedbackEvent: (provider, eventId) => `${prefix}:evt:${provider}:${eventId}`,
    feedbackSignal: (provider, eventId) => `${prefix}:evtsig:${provider}:${eventId}`,
    webhookToken: (provider, token) => `${prefix}:whtok:${provider}:${token}`,
    signals: (kind, name, start) => `${prefix}:sig:${kind}:${name}:${start}`,
    signalIndex: (kind) => `${prefix}:sigidx:${kind}`,
    governorLeader: () => `${prefix}:gov:leader`,
    circuitProbes: (circuit, period) => `${prefix}:probe:${circuit}:${period}`,
    governorLog: () => `${prefix}:gov:log`,
    unknownReplies: () => `${prefix}:replies:unknown`,
    latency: (priority) => `${prefix}:latency:${priority}`,
    opsOutcomes: () => `${prefix}:ops:outcomes`,
    warmup: (pool) => `${prefix}:warmup:${pool}`,
    warmupSent: (pool, dayStart) => `${prefix}:warmsent:${pool}:${dayStart}`,
    audit: () => `${limiter}:audit`,
    outcomes: () => `${prefix}:outcomes`,
    compactRecords: (id, block) => `${prefix}:mc:${id}:${block}`,
    goneRecords: (id) => `${prefix}:mgone:${id}`,
    launch: (id) => `${prefix}:launch:${id}`,
    launches: () => `${prefix}:launches`,
    feedApplied: () => `${prefix}:feed:applied`,
    fleetBeats: () => `{${prefix}:fleet}:beats`,
    fleetProcesses: () => `{${prefix}:fleet}:procs`,
    fleetUnscheduled: () => `{${prefix}:fleet}:unscheduled`,
  };
}

/**
 * The layer kind and name of a bucket key made by `keys.bucket` (e.g. a governed key read
 * back from the adjustments hash), or `undefined` for any other key.
 */
export function parseBucket(keys: Keys, key: string): { kind: LayerKind; name: string } | undefined {
  for (const kind of LAYER_KINDS) {
    const prefix = keys.bucket(kind, '');
    if (key.startsWith(prefix)) return { kind, name: key.slice(prefix.length) };
  }
  return undefined;
}
