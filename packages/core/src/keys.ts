import type { PriorityClass } from './priority.js';

/**
 * Every queue name and Redis key Sluice uses, built in one place. They outlive
 * deployments: never rename one without a migration.
 *
 * Every multi-key script and `MULTI` touches keys of one hash tag, so Sluice runs on Redis
 * Cluster; the slot layout is docs/design/state-and-owners.md. A queue's name is its own hash
 * tag (`{intake-normal}`, `{campaign-<id>}`, `dispatch-<class>-{<partition tag>}`), since BullMQ's
 * scripts read keys of a queue they do not declare. BullMQ forbids `:` in queue names.
 */
export interface Keys {
  /** The BullMQ key prefix (queue keys are `<prefix>:<queue>:…`). */
  readonly prefix: string;
  /** Intake queue of transactional mail of one class (`{intake-<class>}`). */
  intakeQueue(priority: PriorityClass): string;
  /** A campaign's own intake queue (`{campaign-<id>}`): its keys share the campaign's tag. */
  campaignQueue(campaignId: string): string;
  /**
   * Admitted work of one class in partition `partition` of `partitions`
   * (`redis.dispatchPartitions`): `dispatch-<class>-{<bin's tag>}`, consumed by workers.
   * @defaultValue partition `0` of `1`
   */
  dispatchQueue(priority: PriorityClass, partition?: number, partitions?: number): string;
  /** Every dispatch queue name a class can have (one per bin, whatever the partitions). */
  dispatchQueues(priority: PriorityClass): string[];
  /** One quota layer's bucket (a hash of GCRA slices). All share the limiter hash tag. */
  bucket(layer: LayerKind, name: string): string;
  /**
   * A tenant's or an API key's plan-cap counters (a hash: the count of the current and next
   * UTC minute, hour, day and month), under the limiter's tag: checked in the admission's script.
   */
  capCount(of: 'tenant' | 'key', id: string): string;
  /** A provider's connection-slot semaphore (sorted set of leases). */
  slots(provider: string): string;
  /**
   * A receiver's connection slots as an adjustments entry (no key of its own): what "too many
   * connections" lowers, beside the receiver's rate (`bucket('receiver', …)`).
   */
  receiverConnections(receiver: string): string;
  /** The live holders of a provider's slots (sorted set by expiry), for fair shares. */
  slotHolders(provider: string): string;
  /** A message's record: state, attempts, last reply. In its home ({@link homeOf}). */
  message(id: string): string;
  /** A tenant's record (hash: plan, owner and platform statuses). Under the tenant's tag. */
  tenant(tenantId: string): string;
  /** Every tenant with a record (set of ids), under the api's fleet-wide tag. */
  tenants(): string;
  /** An API key's record (hash; the token only as its keyed hash). Under its tenant's tag. */
  apiKey(tenantId: string, keyId: string): string;
  /** A tenant's API key ids (set). Under the tenant's tag. */
  tenantKeys(tenantId: string): string;
  /** Which tenant each API key id is of (hash id → tenant), under the api's fleet-wide tag. */
  keyIndex(): string;
  /** A tenant's audit trail (stream: key and status events, its keys' auth failures). Under its tag. */
  tenantAudit(tenantId: string): string;
  /** Auth failures that name no known key (stream), under the api's fleet-wide tag. */
  apiAudit(): string;
  /**
   * An `Idempotency-Key` of one API key on one route (hash: the body's fingerprint, the claiming
   * request's token, then the answer's status and body), kept 24 h. Under the tenant's tag.
   */
  idempotency(tenantId: string, keyId: string, route: string, hash: string): string;
  /** A tenant's suppression list (hash: lower-cased address → `source|at|provider|reason`). Under the tenant's tag. */
  suppression(tenantId: string): string;
  /** A campaign's settings, flags and window (hash). Under the campaign's tag, with its queue. */
  campaign(campaignId: string): string;
  /**
   * A campaign's part in one home (hash): its counters of the messages there (`n:<state>` →
   * count), summed over the homes by the campaign's status, and a copy of its pause flag, which
   * the worker's submit mark reads in the same script as the record.
   */
  campaignHome(campaignId: string, home: number): string;
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
  /** A message's attempt log (list of JSON entries): reply, family, classifier version. In its home. */
  attempts(id: string): string;
  /** A tenant's address's full-mailbox rejections (sorted set message id → ms), within `suppression.mailboxFull.windowMs`. */
  mailboxFull(tenantId: string, address: string): string;
  /** Soft bounces of one address of a tenant (sorted set of event ids by time), for the window. */
  softBounces(tenantId: string, address: string): string;
  /** Marks an ESP event applied (string with a TTL), so the ESP's retries of it change nothing. Under the tenant's tag. */
  feedbackEvent(tenantId: string, provider: string, eventId: string): string;
  /** Marks an ESP event's bounce or complaint counted in the signals (string with a TTL): counted once. Under the signals' tag. */
  feedbackSignal(provider: string, eventId: string): string;
  /** Marks a webhook token seen (string with a TTL): a replayed signed request is refused. */
  webhookToken(provider: string, token: string): string;
  /** Outcome counts of one key in one time bucket (hash field → count), for the signals. All signal keys share a tag. */
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
   * Every final state and first deferral of the messages of one home, for backends' consumer
   * groups (a stream, trimmed to what every group has acknowledged; docs/design/outcomes.md).
   */
  outcomes(home: number): string;
  /**
   * A dispatch batch being filled by a scheduler (list of its recipients' dispatch data, JSON),
   * kept until its job is written: `id` names the scheduler and the batch. In the recipients' home.
   */
  batchFilling(home: number, id: string): string;
  /**
   * The batches being filled in one home (sorted set batch id → the time its job is due at the
   * latest, epoch ms), so one whose scheduler died is written by another.
   */
  batchesFilling(home: number): string;
  /**
   * The compact records of one block of 64 positions of an injected campaign (a hash kept a
   * listpack: field `2·slot` state, time and provider, `2·slot+1` the provider's message id).
   * In the block's home ({@link homeOfBlock}).
   */
  compactRecords(campaignId: string, block: number): string;
  /**
   * The positions of an injected campaign whose records are gone (`until-acknowledged`), in one
   * home: a bitmap, one bit a recipient at {@link goneBit}, so injecting one again is refused.
   */
  goneRecords(campaignId: string, home: number): string;
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
  /**
   * The limiter's epoch (a string set once, under the limiter's tag): gone means the limiter's
   * Redis lost its data (its buckets with it), which {@link Keys.limiterEpochSeen} tells apart
   * from a first start.
   */
  limiterEpoch(): string;
  /** The limiter epoch the fleet last saw (a string in the queues' Redis). */
  limiterEpochSeen(): string;
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
 * The message homes: where a message's record, attempt log, compact record, its campaign's
 * counters for it and its outcome event live, so one script writes them all (`accept-4`,
 * `transition-3`, `finalize-n`, `retain-4`). Sixteen hash tags, chosen so their slots lie one in
 * each sixteenth of the 16,384 slots: a cluster's masters, which own contiguous ranges, each
 * serve about as many homes. Fixed for good: a record's key follows from its id and this table.
 */
const HOME_TAGS = [
  'h0.78', 'h1.64', 'h2.58', 'h3.40', 'h4.279', 'h5.10', 'h6.28', 'h7.9',
  'h8.8', 'h9', 'h10.45', 'h11.59', 'h12.60', 'h13.78', 'h14.26', 'h15.8',
] as const; // prettier-ignore

/** How many message homes there are ({@link homeOf}). */
export const HOME_COUNT = HOME_TAGS.length;

/** Every message home, `0` to `HOME_COUNT - 1`: what a reader of every home's part goes through. */
export const HOMES: readonly number[] = HOME_TAGS.map((_, h) => h);

/** Positions of an injected campaign per block of compact records (and per home in turn). */
export const COMPACT_BLOCK = 64;

/**
 * The dispatch queues' hash tags: 64 bins, the slot of bin `j`'s tag in the middle of the
 * `j`th 256 slots. Partition `i` of `n` takes the bin at `(i + ½) / n` of the way, so `n`
 * partitions sit evenly over the slots, and a cluster's masters (which own contiguous ranges)
 * each serve about as many of them, for any `n`.
 */
const DISPATCH_BINS = [
  'b0.56', 'b1.371', 'b2.162', 'b3.357', 'b4.351', 'b5.20', 'b6.377', 'b7.2',
  'b8.126', 'b9.37', 'b10.61', 'b11.48', 'b12.177', 'b13.20', 'b14.124', 'b15.17',
  'b16.143', 'b17.376', 'b18.28', 'b19.167', 'b20.66', 'b21.105', 'b22.33', 'b23.123',
  'b24.44', 'b25.130', 'b26.11', 'b27.38', 'b28.352', 'b29.167', 'b30.64', 'b31.156',
  'b32.76', 'b33.137', 'b34.41', 'b35.68', 'b36.29', 'b37.322', 'b38.306', 'b39.133',
  'b40.162', 'b41.44', 'b42.38', 'b43.11', 'b44.32', 'b45.142', 'b46.67', 'b47.164',
  'b48.24', 'b49.169', 'b50.130', 'b51.47', 'b52.8', 'b53.143', 'b54.31', 'b55.18',
  'b56.9', 'b57.176', 'b58.26', 'b59.367', 'b60.68', 'b61.41', 'b62.1', 'b63.14',
] as const; // prettier-ignore

/** The most dispatch partitions a fleet may have (`redis.dispatchPartitions`). */
export const MAX_DISPATCH_PARTITIONS = 32;

/** FNV-1a, 32 bits: a stable hash of a string (part of the key layout: never change it). */
export function stableHash(value: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) {
    h ^= value.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The campaign and position of an injected recipient's id (`<campaignId>_<position>`), or
 * `undefined` for any other id (transactional ids, `m…`/`k…` hex, never contain `_`). Split at
 * the last `_`; digits must follow it.
 */
export function parseInjectedId(id: string): { campaignId: string; position: number } | undefined {
  const at = id.lastIndexOf('_');
  if (at <= 0) return undefined;
  const digits = id.slice(at + 1);
  if (!/^\d{1,15}$/.test(digits)) return undefined;
  return { campaignId: id.slice(0, at), position: Number(digits) };
}

/**
 * The home of block `block` of an injected campaign: the blocks of a campaign go round the
 * homes in turn from a start its id picks, so a campaign of any size spreads over every home.
 */
export function homeOfBlock(campaignId: string, block: number): number {
  return (stableHash(campaignId) + block) % HOME_COUNT;
}

/** A message's home: its block's for an injected recipient, else a hash of its id. */
export function homeOf(id: string): number {
  const injected = parseInjectedId(id);
  if (injected) return homeOfBlock(injected.campaignId, Math.floor(injected.position / COMPACT_BLOCK));
  return stableHash(id) % HOME_COUNT;
}

/**
 * Where an injected recipient's bit is in its home's bitmap of records gone: a home holds every
 * sixteenth block of a campaign, so the bitmaps of the sixteen homes together take one bit per
 * recipient.
 */
export function goneBit(position: number): number {
  const block = Math.floor(position / COMPACT_BLOCK);
  return Math.floor(block / HOME_COUNT) * COMPACT_BLOCK + (position % COMPACT_BLOCK);
}

/** The dispatch partition of a message (`redis.dispatchPartitions` of them): a stable hash of its id. */
export function dispatchPartitionOf(messageId: string, partitions: number): number {
  return partitions <= 1 ? 0 : stableHash(messageId) % partitions;
}

/** The bin (0–63) of dispatch partition `partition` of `partitions`. */
function dispatchBin(partition: number, partitions: number): number {
  if (!(partition >= 0 && partition < partitions && partitions <= MAX_DISPATCH_PARTITIONS))
    throw new RangeError(`dispatch partition ${partition} of ${partitions} (at most ${MAX_DISPATCH_PARTITIONS})`);
  return Math.floor(((partition + 0.5) * DISPATCH_BINS.length) / partitions);
}

/**
 * Key builders for a deployment.
 * @param prefix - namespace of every key. @defaultValue `'sluice'`
 */
export function createKeys(prefix = 'sluice'): Keys {
  // One hash tag for every limiter key, so the multi-key script also runs on Cluster.
  const limiter = `{${prefix}:rl}`;
  // The signals and the markers that count an event once: one tag, for count-once-11.
  const sig = `{${prefix}:sig}`;
  // The fleet-wide sets of campaigns (active, with work, archived, archiving, launches).
  const index = `{${prefix}:cx}`;
  const home = (h: number): string => `${prefix}:{${HOME_TAGS[h] ?? HOME_TAGS[0]}}`;
  const campaign = (id: string): string => `${prefix}:c:{campaign-${id}}`;
  const tenant = (id: string): string => `{t-${id}}`;
  // Tenants and API keys fleet-wide: the list of tenants, the key index, unattributed failures.
  const api = `{${prefix}:api}`;
  return {
    prefix,
    intakeQueue: (p) => `{intake-${p}}`,
    campaignQueue: (id) => `{campaign-${id}}`,
    dispatchQueue: (p, partition = 0, partitions = 1) =>
      `dispatch-${p}-{${DISPATCH_BINS[dispatchBin(partition, partitions)]}}`,
    dispatchQueues: (p) => DISPATCH_BINS.map((tag) => `dispatch-${p}-{${tag}}`),
    bucket: (layer, name) => `${limiter}:${LAYER_TAG[layer]}:${name}`,
    capCount: (of, id) => `${limiter}:cap:${of}:${id}`,
    slots: (provider) => `${limiter}:slots:${provider}`,
    receiverConnections: (receiver) => `${limiter}:conn:${receiver}`,
    slotHolders: (provider) => `${limiter}:holders:${provider}`,
    message: (id) => `${home(homeOf(id))}:msg:${id}`,
    tenant: (tenantId) => `${prefix}:tenant:${tenant(tenantId)}`,
    tenants: () => `${prefix}:${api}:tenants`,
    apiKey: (tenantId, keyId) => `${prefix}:key:${tenant(tenantId)}:${keyId}`,
    tenantKeys: (tenantId) => `${prefix}:keys:${tenant(tenantId)}`,
    keyIndex: () => `${prefix}:${api}:keyidx`,
    tenantAudit: (tenantId) => `${prefix}:audit:${tenant(tenantId)}`,
    apiAudit: () => `${prefix}:${api}:audit`,
    idempotency: (tenantId, keyId, route, hash) => `${prefix}:idem:${tenant(tenantId)}:${keyId}:${route}:${hash}`,
    suppression: (tenantId) => `${prefix}:sup:${tenant(tenantId)}`,
    campaign,
    campaignHome: (id, h) => `${home(h)}:cn:${id}`,
    campaignContent: (id) => `${campaign(id)}:content`,
    campaignCursor: (id) => `${campaign(id)}:cursor`,
    campaigns: () => `${prefix}:${index}:campaigns`,
    campaignsWithWork: () => `${prefix}:${index}:work`,
    archivedCampaigns: () => `${prefix}:${index}:archived`,
    campaignsArchiving: () => `${prefix}:${index}:archiving`,
    adjustments: () => `${limiter}:adjust`,
    attempts: (id) => `${home(homeOf(id))}:attempts:${id}`,
    softBounces: (tenantId, address) => `${prefix}:soft:${tenant(tenantId)}:${address}`,
    mailboxFull: (tenantId, address) => `${prefix}:mbfull:${tenant(tenantId)}:${address}`,
    feedbackEvent: (tenantId, provider, eventId) => `${prefix}:evt:${tenant(tenantId)}:${provider}:${eventId}`,
    feedbackSignal: (provider, eventId) => `${prefix}:${sig}:evtsig:${provider}:${eventId}`,
    webhookToken: (provider, token) => `${prefix}:whtok:${provider}:${token}`,
    signals: (kind, name, start) => `${prefix}:${sig}:${kind}:${name}:${start}`,
    signalIndex: (kind) => `${prefix}:${sig}:idx:${kind}`,
    governorLeader: () => `${prefix}:gov:leader`,
    circuitProbes: (circuit, period) => `${prefix}:probe:${circuit}:${period}`,
    governorLog: () => `${prefix}:gov:log`,
    unknownReplies: () => `${prefix}:replies:unknown`,
    latency: (priority) => `${prefix}:latency:${priority}`,
    opsOutcomes: () => `${prefix}:ops:outcomes`,
    warmup: (pool) => `${prefix}:warmup:${pool}`,
    warmupSent: (pool, dayStart) => `${prefix}:warmsent:${pool}:${dayStart}`,
    audit: () => `${limiter}:audit`,
    outcomes: (h) => `${home(h)}:outcomes`,
    batchFilling: (h, id) => `${home(h)}:bfill:${id}`,
    batchesFilling: (h) => `${home(h)}:bfill`,
    compactRecords: (id, block) => `${home(homeOfBlock(id, block))}:mc:${id}:${block}`,
    goneRecords: (id, h) => `${home(h)}:mgone:${id}`,
    launch: (id) => `${campaign(id)}:launch`,
    launches: () => `${prefix}:${index}:launches`,
    feedApplied: () => `${prefix}:feed:applied`,
    fleetBeats: () => `{${prefix}:fleet}:beats`,
    fleetProcesses: () => `{${prefix}:fleet}:procs`,
    fleetUnscheduled: () => `{${prefix}:fleet}:unscheduled`,
    limiterEpoch: () => `${limiter}:epoch`,
    limiterEpochSeen: () => `${prefix}:limiter:epoch`,
  };
}

/** The campaign whose queue is named `name` (`{campaign-<id>}`), or `undefined` for another queue. */
export function campaignOfQueue(name: string): string | undefined {
  const match = /^\{campaign-(.+)\}$/.exec(name);
  return match?.[1];
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
