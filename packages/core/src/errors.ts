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
  | 'fleet_incompatible';

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
