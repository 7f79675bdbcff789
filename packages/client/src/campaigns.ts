import type { RecipientInput } from '@sluice/core';
import type {
  ApproveOptions,
  Campaign,
  CampaignInput,
  CampaignStatus,
  Campaigns as Lifecycle,
  InjectOptions,
  InjectResult,
  LaunchForecastInput,
  LaunchGate,
  LaunchOptions,
  LaunchRecord,
} from '@sluice/store';

/**
 * Campaign control: the campaign lifecycle of `@sluice/store`, which every surface (admin
 * API, Bull Board, CLI, governor) calls too.
 */
export interface Campaigns {
  /** Creates a campaign; `campaign_exists` if the id is taken, `invalid_argument` naming the field. */
  create(input: CampaignInput): Promise<Campaign>;
  get(id: string): Promise<Campaign | null>;
  /** The active campaigns' ids, sorted. */
  ids(): Promise<string[]>;
  /** The archived campaigns' ids, sorted (until their records expire). */
  archivedIds(): Promise<string[]>;
  /** Stops the campaign's sends within a second; its backlog waits. */
  pause(id: string): Promise<void>;
  /**
   * Continues where it stopped. A cancelled campaign is refused with `campaign_cancelled`
   * and stays paused: cancelling cannot be undone.
   */
  resume(id: string): Promise<void>;
  /** Settings, counters, queue, launch; an archived campaign answers from its record (`archive` set). */
  status(id: string): Promise<CampaignStatus>;
  /**
   * Archives a finished campaign: its queue goes, its record stays (`status` answers) and it
   * leaves the lists; `campaign_not_finished` naming why if it is not finished. The leader
   * archives finished campaigns by itself after `campaigns.archiveAfterMs`.
   */
  archive(id: string, options?: { actor?: string }): Promise<boolean>;
  /** Deletes an archived or finished campaign for good (`campaign_not_finished` otherwise). */
  delete(id: string, options?: { actor?: string }): Promise<void>;
  /**
   * Asks for the campaign's admission decision on a forecast (`{ total, domains }` counts per
   * recipient domain, or `{ total, sample }` which Sluice scales) and waits for a scheduler to
   * decide it (`timeoutMs`, 10 s: then `no_scheduler`, the request stays stored). Not bound by
   * the client's `timeoutMs`: it has its own.
   */
  launch(id: string, forecast: LaunchForecastInput, options?: LaunchOptions): Promise<LaunchRecord>;
  /** Approves a delay or split waiting for an operator (audited); `approval_refused` otherwise. */
  approve(id: string, options: ApproveOptions): Promise<LaunchRecord>;
  /** What may be injected now: open (within waves, minus stopped domains), wait, or refused. */
  gate(id: string): Promise<LaunchGate>;
  /**
   * Streams a campaign's recipients into Sluice (docs/design/campaigns.md): each is
   * `{ to, data?, key?, cursor? }`, rendered from the campaign's content at send time.
   * Redis holds only the campaign's window; the call waits while it is full, so a list of
   * any size flows at the rate the campaign is admitted. Each chunk and the cursor are
   * written together: after a crash, `inject(id, rest, { from: (await status(id)).cursor.position })`
   * goes on with none skipped and none twice. Resolves when every recipient is accepted.
   */
  inject(
    id: string,
    recipients: Iterable<RecipientInput> | AsyncIterable<RecipientInput>,
    options?: InjectOptions,
  ): Promise<InjectResult>;
}

/** The client's face of the lifecycle (the injection is the client's own). */
export function clientCampaigns(lifecycle: Lifecycle): Omit<Campaigns, 'inject'> {
  return {
    create: (input) => lifecycle.create(input),
    get: (id) => lifecycle.get(id),
    ids: () => lifecycle.ids(),
    archivedIds: () => lifecycle.archivedIds(),
    pause: (id) => lifecycle.pause(id, { actor: 'client' }),
    async resume(id) {
      await lifecycle.resume(id, { actor: 'client' });
    },
    status: (id) => lifecycle.status(id),
    archive: (id, options) => lifecycle.archive(id, { actor: 'client', ...options }),
    delete: (id, options) => lifecycle.delete(id, { actor: 'client', ...options }),
    launch: (id, forecast, options) => lifecycle.launch(id, forecast, { actor: 'client', ...options }),
    approve: (id, options) => lifecycle.approve(id, options),
    gate: (id) => lifecycle.gate(id),
  };
}
