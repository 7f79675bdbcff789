import { z } from 'zod';

// The admission decision at a campaign's launch (docs/design/campaigns.md, launching): what the
// scheduler's governor leader checks before a campaign's first recipient is injected.

/** What a launch checks and what it decides when a check fails. */
export const launchSchema = z
  .strictObject({
    /**
     * A forecast whose last recipient at some receiver would be sent after the class lifetime
     * (or the campaign's own expiry): `reject` refuses the launch; `split` sends it in waves,
     * each short enough to finish within the lifetime at the slowest receiver.
     * @defaultValue `'split'`
     */
    onPastExpiry: z.enum(['reject', 'split']).default('split'),
    /** A split needing more waves than this is rejected instead. @defaultValue `24` */
    maxWaves: z.number().int().min(2).max(1000).default(24),
    /**
     * Who approves a delay or a split before it takes effect: `operator` (`sluice campaigns
     * approve`; the launch waits meanwhile) or `auto` (in effect at once, approver `sluice`).
     * An accept never waits; a reject is never approved when storage is critical.
     * @defaultValue `'operator'`
     */
    approval: z.enum(['operator', 'auto']).default('operator'),
    /**
     * The share of the forecast whose receivers have an open circuit above which the launch
     * is held until the circuits close. @defaultValue `0.1`
     */
    materialShare: z.number().gt(0).max(1).default(0.1),
    /** Redis headroom (`INFO memory`: used_memory against maxmemory). */
    storage: z
      .strictObject({
        /** The budget when Redis has no `maxmemory` (0). @defaultValue 4 GiB */
        budgetBytes: z
          .number()
          .int()
          .positive()
          .default(4 * 1024 ** 3),
        /** At this share of the budget used, a launch is held until there is room. @defaultValue `0.8` */
        holdAbove: z.number().gt(0).max(1).default(0.8),
        /** At this share, a launch is rejected (storage-critical: never approved). @defaultValue `0.95` */
        rejectAbove: z.number().gt(0).max(1).default(0.95),
      })
      .prefault({}),
    /**
     * The suppression feed (ESP webhooks) is stale when the last event applied from a provider
     * of the campaign's route is older than this: the launch is held (addresses that bounced
     * meanwhile are not suppressed yet). A provider never heard from is not judged.
     * @defaultValue 1 hour
     */
    feedMaxAgeMs: z.number().int().positive().default(3_600_000),
    /** How often the leader re-checks an accepted launch against the rates in force. @defaultValue `5_000` */
    recheckMs: z.number().int().positive().default(5_000),
  })
  .prefault({});
