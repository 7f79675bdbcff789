import { z } from 'zod';

// When a campaign ends (docs/design/campaigns.md): the scheduler's governor leader archives
// a finished campaign, and an archived record expires after its retention.

const DAY_MS = 86_400_000;

/** The campaign lifecycle's end: archiving and the archived records' retention. */
export const campaignsSchema = z
  .strictObject({
    /**
     * How long a campaign stays finished (every accepted message final, nothing in its queue,
     * no launch waiting; or cancelled with nothing in its queue) before the leader archives it:
     * its queue is removed and it leaves the lists, `campaigns.status` still answers.
     * @defaultValue 7 days
     */
    archiveAfterMs: z
      .number()
      .int()
      .positive()
      .default(7 * DAY_MS),
    /**
     * How long an archived campaign's record (settings, counters, content summary, launch
     * decision) is kept; then it is gone and its id free. Messages keep their own records'
     * TTL (`delivery.recordTtlSeconds`) whatever this says.
     * @defaultValue 90 days
     */
    archivedRetentionMs: z
      .number()
      .int()
      .positive()
      .default(90 * DAY_MS),
    /** How often the leader looks for finished campaigns (one pass over the idle ones). @defaultValue `60_000` */
    archiveCheckMs: z.number().int().positive().default(60_000),
  })
  .prefault({});
