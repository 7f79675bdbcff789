/** What a caller should do about an error. */
export type ErrorAction = 'permanent' | 'retry' | 'transient';

/** Stable error codes. Never renamed: callers switch on them. */
export type SluiceErrorCode =
  | 'invalid_message'
  | 'invalid_config'
  | 'invalid_argument'
  | 'unknown_campaign'
  | 'campaign_exists'
  | 'campaign_cancelled'
  /** A send or injection into an archived campaign, or a change to one (`campaigns.archive`). */
  | 'campaign_archived'
  /** `campaigns.archive` or `campaigns.delete` of a campaign that is not finished (the message says why). */
  | 'campaign_not_finished'
  | 'invalid_recipient'
  | 'render_failed'
  | 'cursor_ahead'
  | 'campaign_no_content'
  | 'aborted'
  | 'campaign_rejected'
  | 'campaign_not_launched'
  | 'redis_unavailable'
  | 'unknown_group'
  | 'closed'
  /** `campaigns.launch`: no scheduler decided within the wait (the request stays stored). */
  | 'no_scheduler'
  /** `campaigns.launch` of a campaign whose launch is decided already (and not rejected). */
  | 'campaign_launched'
  /** `campaigns.approve` of a decision that cannot be approved (a storage-critical reject, none pending). */
  | 'approval_refused'
  /** The client's first call: no process of a fleet beats under its prefix (a wrong prefix, or no fleet running). */
  | 'no_fleet'
  /** The client's first call: the fleet under its prefix speaks another store schema. */
  | 'fleet_incompatible'
  /** A call names a tenant that has no record (`sluice tenants create` makes one). */
  | 'unknown_tenant'
  /** Mail of a tenant whose owner or platform status is `disabled`. */
  | 'tenant_disabled'
  /** A key operation names a key id its tenant does not have. */
  | 'unknown_key'
  /** Keys are used or made while no pepper is configured (`api.keys.pepper`). */
  | 'keys_unconfigured'
  /** An HTTP request without a key (no `Authorization: Bearer`). */
  | 'key_missing'
  /** A key that is not a Sluice key, or whose checksum is wrong (mistyped or cut short). */
  | 'key_malformed'
  /** A well-formed key that is not one of ours (no such id, or another secret). */
  | 'key_invalid'
  | 'key_revoked'
  | 'key_expired'
  /** A key used for what its scopes, streams or from-domains do not allow. */
  | 'key_scope'
  /** A key used from an address outside its allowed CIDRs. */
  | 'key_source'
  /** Mail sent with a key whose owner or platform status is `disabled`. */
  | 'key_disabled'
  /** An `Idempotency-Key` header that is empty, too long or not visible ASCII. */
  | 'idempotency_key_invalid'
  /** An `Idempotency-Key` used before on the route with another body. */
  | 'idempotency_key_reused'
  /** An `Idempotency-Key` whose first request is still being answered. */
  | 'idempotency_in_flight'
  /** New mail refused while Redis is past `launch.storage.rejectAbove` of its memory. */
  | 'storage_full'
  /** Recipients over HTTP while their campaign takes no more (its window full) past the request's wait. */
  | 'injection_waiting'
  /** New mail of a tenant or key at a plan cap whose plan refuses there (`atCap: refuse`). */
  | 'cap_reached';

/** What the errors reference says of one code: when it is thrown, what Sluice says to do, what a caller does. */
export interface ErrorCodeDoc {
  /** The action errors of this code carry (`varies`: the message and `action` of each say). */
  action: ErrorAction | 'varies';
  /** When it is thrown, in a sentence. */
  when: string;
  /** What a caller does about it, in a sentence. */
  callerDoes: string;
}

/**
 * Every code with when it is thrown and what a caller does: the source of the generated
 * errors reference (docs/reference/errors.md). A code added to {@link SluiceErrorCode}
 * without a line here does not compile.
 */
export const ERROR_CODES: Readonly<Record<SluiceErrorCode, ErrorCodeDoc>> = {
  invalid_message: {
    action: 'permanent',
    when: 'A message handed to `send`/`sendBulk` fails its schema; `path` names the field (`messages.3.to`).',
    callerDoes: 'Fix the field and send again; in a batch nothing was written.',
  },
  invalid_config: {
    action: 'permanent',
    when: 'The config file, an environment variable it reads, or a provider option is wrong or missing at start; `path` names the key.',
    callerDoes: 'Fix the key the message names; the process does not start until then.',
  },
  invalid_argument: {
    action: 'permanent',
    when: 'An argument of a client, CLI or ops call is out of range or malformed; `path` names it.',
    callerDoes: 'Fix the argument; nothing was written.',
  },
  unknown_campaign: {
    action: 'permanent',
    when: 'A campaign call names a campaign id that was never created, or was deleted.',
    callerDoes: 'Check the id; create the campaign first.',
  },
  campaign_exists: {
    action: 'permanent',
    when: '`campaigns.create` with an id that exists already (with other settings).',
    callerDoes: 'Use another id, or go on with the existing campaign.',
  },
  campaign_cancelled: {
    action: 'permanent',
    when: 'A send, injection or launch into a cancelled campaign.',
    callerDoes: 'Stop sending to it; create a new campaign for new mail.',
  },
  campaign_archived: {
    action: 'permanent',
    when: 'A send or injection into an archived campaign, or a change to one.',
    callerDoes: 'Create a new campaign; an archived one only answers its status.',
  },
  campaign_not_finished: {
    action: 'permanent',
    when: '`campaigns.archive` or `campaigns.delete` of a campaign that still has mail in flight (the message says what).',
    callerDoes: 'Wait until it finishes, or cancel it first.',
  },
  invalid_recipient: {
    action: 'permanent',
    when: 'A recipient of an injection (or a CSV row) fails its schema; `path` names the row and field.',
    callerDoes: 'Fix or drop the row and inject again from the cursor; nothing of that chunk was written.',
  },
  render_failed: {
    action: 'permanent',
    when: "A campaign's template cannot render for a recipient (a variable its data lacks); `path` names the part (`content.html`).",
    callerDoes: "Fix the template or the recipient's data; that message ends `rejected` with the reason.",
  },
  cursor_ahead: {
    action: 'varies',
    when: "An injection's `from` is past the campaign's cursor (recipients in between were never accepted), or the cursor went back (Redis lost writes: transient).",
    callerDoes: 'Resume from the cursor the message names.',
  },
  campaign_no_content: {
    action: 'permanent',
    when: 'Recipients injected into a campaign created without content.',
    callerDoes: 'Create the campaign with content, or send whole messages with `send`/`sendBulk`.',
  },
  aborted: {
    action: 'permanent',
    when: "An injection stopped by its caller's `AbortSignal`.",
    callerDoes: "Resume from the campaign's cursor when you want to go on.",
  },
  campaign_rejected: {
    action: 'permanent',
    when: 'An injection into a campaign whose launch was rejected (the forecast would exceed a limit or storage).',
    callerDoes: 'Read the decision (`sluice campaigns show <id>`), change the campaign and launch again.',
  },
  campaign_not_launched: {
    action: 'permanent',
    when: 'Recipients injected into a campaign that was never launched.',
    callerDoes: 'Call `campaigns.launch` first and inject once it is admitted.',
  },
  redis_unavailable: {
    action: 'transient',
    when: "Redis did not answer within the call's deadline (a send may have been written).",
    callerDoes: 'Retry later with the same `idempotencyKey`: a written send is not written twice.',
  },
  unknown_group: {
    action: 'permanent',
    when: 'Reading or acknowledging outcomes for a consumer group that was never subscribed.',
    callerDoes: 'Subscribe the group first (`outcomes.subscribe`).',
  },
  closed: {
    action: 'permanent',
    when: 'A call on a client after `close()`.',
    callerDoes: 'Create a new client; a closed one stays closed.',
  },
  no_scheduler: {
    action: 'transient',
    when: '`campaigns.launch` found no scheduler to decide within its wait (the request stays stored), or mail was accepted while no scheduler runs (a warning).',
    callerDoes: 'Start a scheduler (or wait for one); the launch is decided once one runs.',
  },
  campaign_launched: {
    action: 'permanent',
    when: '`campaigns.launch` of a campaign whose launch is decided already (and not rejected).',
    callerDoes: 'Read its decision instead; launch only a new or rejected campaign.',
  },
  approval_refused: {
    action: 'permanent',
    when: '`campaigns.approve` of a decision that cannot be approved: none pending, or a reject for storage.',
    callerDoes: 'Read the decision; free storage or change the campaign, then launch again.',
  },
  no_fleet: {
    action: 'transient',
    when: "The client's first call found no scheduler or worker beating under its prefix.",
    callerDoes:
      "Check the client's prefix is the fleet's `redis.prefix` and that the fleet runs; `fleetCheck: 'warn'` accepts mail anyway.",
  },
  fleet_incompatible: {
    action: 'permanent',
    when: "The client's first call found a fleet that speaks another store schema.",
    callerDoes: "Install the client of the fleet's release (CHANGELOG.md).",
  },
  unknown_tenant: {
    action: 'permanent',
    when: 'A tenant or key call names a tenant without a record.',
    callerDoes: 'Create the tenant first (`sluice tenants create <id> --plan <plan>`), or check the id.',
  },
  tenant_disabled: {
    action: 'permanent',
    when: 'Mail of a tenant whose owner or platform status is `disabled` (the message says which, and why); nothing was written.',
    callerDoes: "Ask whoever set the status (the tenant's admin or the platform) to enable it.",
  },
  unknown_key: {
    action: 'permanent',
    when: 'A key call (`rotate`, `revoke`, `show`) names an id its tenant does not have.',
    callerDoes: "List the tenant's keys (`sluice keys list <tenant>`) and use one of their ids.",
  },
  keys_unconfigured: {
    action: 'permanent',
    when: 'A key is made or checked while no pepper is configured (`api.keys.pepper` or `SLUICE_API_KEY_PEPPER`).',
    callerDoes: 'Configure the pepper (a secret of at least 32 bytes) on the api and the CLI alike.',
  },
  key_missing: {
    action: 'permanent',
    when: 'An HTTP request without `Authorization: Bearer <key>`.',
    callerDoes: 'Send the key in the `Authorization` header.',
  },
  key_malformed: {
    action: 'permanent',
    when: 'The key is not a Sluice key (`slc_live_…`/`slc_test_…`), or its checksum is wrong: mistyped or cut short.',
    callerDoes: 'Copy the whole key again; it is 51 characters.',
  },
  key_invalid: {
    action: 'permanent',
    when: 'A well-formed key that is not one of ours: no such id, or another secret.',
    callerDoes: 'Use a key `sluice keys create` gave; a lost key cannot be shown again, make a new one.',
  },
  key_revoked: {
    action: 'permanent',
    when: 'A key that was revoked.',
    callerDoes: 'Use another key of the tenant, or make a new one.',
  },
  key_expired: {
    action: 'permanent',
    when: 'A key past its expiry (a rotated key past its overlap, or one made with `--expires`).',
    callerDoes: 'Use the key that replaced it, or make a new one.',
  },
  key_scope: {
    action: 'permanent',
    when: 'A key used for what its scopes, streams or from-domains do not allow; `path` names the field when a message is the reason.',
    callerDoes: "Use a key with that scope, or ask the tenant's admin to make one.",
  },
  key_source: {
    action: 'permanent',
    when: 'A key used from an address outside its allowed CIDRs.',
    callerDoes: "Send from an allowed address, or ask the tenant's admin to widen the key's CIDRs.",
  },
  key_disabled: {
    action: 'permanent',
    when: 'Mail sent with a key whose owner or platform status is `disabled` (the message says which, and why; HTTP 403); nothing was written. The key still reads.',
    callerDoes: "Ask whoever set the status (the tenant's admin or the platform) to enable it, or use another key.",
  },
  idempotency_key_invalid: {
    action: 'permanent',
    when: 'An `Idempotency-Key` header that is empty, longer than 255 characters, or not visible ASCII.',
    callerDoes: 'Send a key of 1 to 255 visible ASCII characters (a UUID is usual).',
  },
  idempotency_key_reused: {
    action: 'permanent',
    when: 'An `Idempotency-Key` the same API key used on the same route within 24 h, with another body (HTTP 422).',
    callerDoes: 'Use a new key for a new request; repeat the first body to get its answer again.',
  },
  idempotency_in_flight: {
    action: 'retry',
    when: 'An `Idempotency-Key` whose first request is still being answered (HTTP 409).',
    callerDoes: 'Retry after `Retry-After`: the first answer is then replayed.',
  },
  storage_full: {
    action: 'retry',
    when: 'New mail over HTTP while Redis is past `launch.storage.rejectAbove` of its memory (HTTP 503); nothing was written.',
    callerDoes:
      'Retry after `Retry-After`; an operator frees room (outcomes acknowledged, campaigns archived) or raises `maxmemory`.',
  },
  injection_waiting: {
    action: 'retry',
    when: "A campaign's recipients over HTTP while it takes no more past the request's `waitMs`: its window is full, the outcome stream is behind, or its launch's next wave has not opened (HTTP 429; the answer's `cursor` says how far it got).",
    callerDoes: 'Send the rest again after `Retry-After`, from `?from=<cursor.position>`.',
  },
  cap_reached: {
    action: 'retry',
    when: "New mail of a tenant (`path` `tenantId`) or an API key (`path` `key`) at one of its plan's caps, on a plan that refuses at a cap (HTTP 429; the message names the window and when it ends); nothing was written.",
    callerDoes: "Send it after `Retry-After` (the window's end), or ask the platform for a larger plan.",
  },
};

/** Options of {@link SluiceError}. */
export interface SluiceErrorOptions {
  /** What the caller should do. @defaultValue `'permanent'` */
  action?: ErrorAction;
  /** For `retry`: wait at least this long. */
  retryAfterMs?: number;
  /** The field path the error is about, dot-separated (`messages.3.to`). */
  path?: string;
  /** The underlying error. */
  cause?: unknown;
}

/** Every error Sluice throws on purpose: a stable `code`, what to do, and the cause. */
export class SluiceError extends Error {
  override readonly name = 'SluiceError';
  readonly code: SluiceErrorCode;
  readonly action: ErrorAction;
  readonly retryAfterMs: number | undefined;
  readonly path: string | undefined;

  constructor(code: SluiceErrorCode, message: string, options: SluiceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.action = options.action ?? 'permanent';
    this.retryAfterMs = options.retryAfterMs;
    this.path = options.path;
  }
}
