import { z } from 'zod';
import { PRIORITY_CLASSES } from './priority.js';

/**
 * The keys a governor rule can act on: a quota layer, or a circuit, the
 * `<receiver>|<pool>|<stream>` triple whose traffic a circuit breaker stops.
 */
export const GOVERNED_SCOPES = ['provider', 'receiver', 'pool', 'campaign', 'tenant', 'circuit'] as const;
/** A key kind the governor adjusts. */
export type GovernedScope = (typeof GOVERNED_SCOPES)[number];

const signalField = z
  .string()
  .regex(
    /^(attempted|accepted|rejected|throttled|bounced_hard|bounced_soft|complained|recipient_deferred|listed|deferred:[a-z_]+|rejected:[a-z_]+)$/,
    {
      message:
        'must be a signal: attempted, accepted, rejected, throttled, bounced_hard, bounced_soft, complained, recipient_deferred, listed, deferred:<family> or rejected:<family>',
    },
  );

/** A regular expression in config, checked when the config is read. */
const pattern = z
  .string()
  .min(1)
  .refine(
    (p) => {
      try {
        new RegExp(p, 'i');
        return true;
      } catch {
        return false;
      }
    },
    { message: 'must be a valid regular expression' },
  );

/**
 * Which replies a rule counts, when a family is not precise enough: every condition given
 * must hold. Workers test each reply that is not an acceptance and count a match as the
 * signal `matched:<rule id>` under every key of the attempt.
 */
const matchSchema = z
  .strictObject({
    /** Reply families (classify.ts), e.g. `policy_block`. */
    families: z
      .array(z.string().regex(/^[a-z_]+$/))
      .min(1)
      .optional(),
    /** RFC 3463 enhanced codes or their prefixes, e.g. `4.7.28` or `5.7`. */
    codes: z
      .array(
        z
          .string()
          .regex(/^[245](\.\d{1,3}){1,2}$/, { message: 'must be an enhanced code or its prefix, e.g. 5.7.1 or 5.7' }),
      )
      .min(1)
      .optional(),
    /** A regular expression over the whole reply text, case-insensitive. */
    text: pattern.optional(),
  })
  .refine((m) => m.families !== undefined || m.codes !== undefined || m.text !== undefined, {
    message: 'needs families, codes or text',
  });

const ruleSchema = z
  .strictObject({
    /** Named in every decision it takes. */
    id: z.string().regex(/^[a-z0-9-]{1,64}$/, { message: 'must match [a-z0-9-]{1,64}' }),
    /**
     * What is counted (a signal field; `deferred:<family>` matches a reply family), or
     * `matched`: the replies `match` describes.
     */
    signal: z.union([signalField, z.literal('matched')]),
    match: matchSchema.optional(),
    /** Ratio trigger: `signal / over` above `above`, once `over` reaches `minVolume` in the window. */
    over: signalField.optional(),
    /** The ratio `signal / over` the rule trips above. */
    above: z.number().min(0).max(1).optional(),
    /** The least `over` in the window before the ratio counts. */
    minVolume: z.number().int().min(1).default(100),
    /** Count trigger: at least this many of `signal` in the window (1 = immediate). */
    atLeast: z.number().int().min(1).optional(),
    /** The key kind acted on: the one whose signals tripped the rule. */
    scope: z.enum(GOVERNED_SCOPES),
    /** Multiplies the key's effective rate (never below the governor's floor). */
    multiply: z.number().gt(0).max(1).optional(),
    /**
     * Cut in proportion instead: to the share that got through, `(1 - ratio) × 0.95`, so
     * one decision lands just under what the receiver takes (a ratio rule only). With
     * `multiply` too, the cut is at least that deep.
     */
    proportional: z.boolean().default(false),
    /** This rule's own sliding window, when it must judge faster than the governor's default. */
    windowMs: z.number().int().positive().optional(),
    /** This rule's own cool-down, when its effect shows sooner than the governor's default. */
    cooldownMs: z.number().int().min(0).optional(),
    /** Also pause these classes of the key's campaign (scope campaign only) for `forMs`. */
    pause: z.array(z.enum(PRIORITY_CLASSES)).optional(),
    /**
     * How long the action holds: a pause lasts this long (an hour when not given); a
     * lowered rate starts recovering only after it (at once when not given).
     */
    forMs: z.number().int().positive().optional(),
    /**
     * Only tell (scope receiver or provider): a decision `alert` in the governor's log, the
     * process log and `status`, at most once per cool-down a key; the rate is not touched and
     * the key's recovery is not held back.
     */
    alert: z.boolean().default(false),
    /**
     * Open the circuit (scope circuit only): nothing of that receiver, pool and stream is
     * admitted for `openForMs`; then `probes` messages per `openForMs` go as probes; if the
     * rule stays calm on them the circuit closes, gradually (the receiver restarts at a
     * quarter of its rate and recovers from there); if not it opens again for twice as long.
     */
    open: z
      .strictObject({
        /** How long the circuit stays open at first. */
        openForMs: z.number().int().positive().default(60_000),
        /** Messages let through as probes per `openForMs` once it is half-open. */
        probes: z.number().int().min(1).default(3),
        /** The longest it stays open, however often it opens again. */
        maxOpenForMs: z.number().int().positive().default(3_600_000),
      })
      .optional(),
  })
  .superRefine((r, ctx) => {
    if ((r.above === undefined) === (r.atLeast === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['above'],
        message: 'a rule needs exactly one trigger: above (a ratio, with over) or atLeast (a count)',
      });
    }
    if (r.above !== undefined && r.over === undefined)
      ctx.addIssue({ code: 'custom', path: ['over'], message: 'a ratio needs the signal it is over' });
    if ((r.open !== undefined) !== (r.scope === 'circuit')) {
      ctx.addIssue({
        code: 'custom',
        path: ['open'],
        message: 'a circuit rule opens circuits, and only a circuit rule does',
      });
    }
    if (r.multiply === undefined && r.pause === undefined && !r.proportional && r.open === undefined && !r.alert) {
      ctx.addIssue({
        code: 'custom',
        path: ['multiply'],
        message: 'a rule needs an action: multiply, proportional, pause, alert',
      });
    }
    if (r.alert && (r.multiply !== undefined || r.pause !== undefined || r.proportional || r.open !== undefined))
      ctx.addIssue({ code: 'custom', path: ['alert'], message: 'an alert rule only alerts: no other action' });
    if (r.alert && r.scope === 'circuit')
      ctx.addIssue({ code: 'custom', path: ['alert'], message: 'an alert is about a layer key, not a circuit' });
    if ((r.signal === 'matched') !== (r.match !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['match'],
        message: 'signal "matched" counts the replies match describes: give both or neither',
      });
    }
    if (r.proportional && r.above === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['proportional'],
        message: 'a proportional cut needs a ratio trigger (above, over)',
      });
    if (r.pause !== undefined && r.scope !== 'campaign')
      ctx.addIssue({ code: 'custom', path: ['pause'], message: 'only a campaign can be paused' });
  });

/** One governor rule, validated. */
export type GovernorRule = z.output<typeof ruleSchema>;

/**
 * The default rules (docs/design/feedback-loop.md): soft bounces over 3% cut a receiver to
 * 0.7; complaints over 0.1% halve a campaign and pause its normal and low traffic;
 * a receiver deferring more than 3% of what it is sent for its rate (421 4.7.28 and the
 * like, over 3 s and 20 sends) is cut to just under what it accepted, and a provider
 * refusing more than 3% for its rate (HTTP 429) the same way, so Sluice settles under a
 * capacity nobody told it; a receiver blocking half of what a pool and stream send it
 * (550 5.7.1 and the like) opens that circuit for 5 minutes, and one saying our IPs are on a
 * block list opens it at once for 10 minutes (one probe then); a receiver whose replies the
 * classifier cannot read (family `unknown`) for more than 5% of 100 or more attempts is
 * reported (`sluice replies unknown` lists them), so an operator adds a rule.
 */
export const DEFAULT_GOVERNOR_RULES = [
  {
    id: 'receiver-throttling',
    signal: 'throttled',
    over: 'attempted',
    above: 0.03,
    minVolume: 20,
    windowMs: 3_000,
    scope: 'receiver',
    proportional: true,
    cooldownMs: 1_000,
  },
  {
    id: 'blocks',
    signal: 'rejected:policy_block',
    over: 'attempted',
    above: 0.5,
    minVolume: 20,
    scope: 'circuit',
    open: { openForMs: 300_000, probes: 3 },
  },
  {
    id: 'listed',
    signal: 'listed',
    atLeast: 1,
    scope: 'circuit',
    open: { openForMs: 600_000, probes: 1 },
  },
  {
    id: 'soft-bounces',
    signal: 'bounced_soft',
    over: 'attempted',
    above: 0.03,
    minVolume: 200,
    scope: 'receiver',
    multiply: 0.7,
  },
  {
    id: 'complaints',
    signal: 'complained',
    over: 'accepted',
    above: 0.001,
    minVolume: 1000,
    scope: 'campaign',
    multiply: 0.5,
    pause: ['normal', 'low'],
  },
  {
    id: 'unknown-replies',
    signal: 'deferred:unknown',
    over: 'attempted',
    above: 0.05,
    minVolume: 100,
    scope: 'receiver',
    alert: true,
  },
  {
    id: 'provider-throttling',
    signal: 'throttled',
    over: 'attempted',
    above: 0.03,
    minVolume: 20,
    windowMs: 3_000,
    scope: 'provider',
    proportional: true,
    cooldownMs: 1_000,
  },
] as const;

/** The `governor` section of the config. */
export const governorSchema = z
  .strictObject({
    /** Whether the leader runs the rules at all (`false`: rates change only by backpressure and overrides). */
    enabled: z.boolean().default(true),
    /** Bumped when the rules change; written with every decision. */
    version: z.string().min(1).default('2026.12.02-3'),
    /** How often the leader evaluates the rules. */
    intervalMs: z.number().int().positive().default(500),
    /** The sliding window the rules read. */
    windowMs: z.number().int().positive().default(60_000),
    /** No rate goes below this share of its configured rate, unless a rule pauses. */
    floor: z.number().gt(0).max(1).default(0.05),
    /**
     * When the limiter's Redis has lost its data (a failover to a replica that had not caught
     * up, a restart without persistence), its buckets are full again: every provider's and
     * receiver's rate is set to this share and climbs back by `recovery`, instead of the fleet
     * sending a full bucket at once. `1` turns it off.
     */
    limiterLossFactor: z.number().gt(0).max(1).default(0.25),
    /** A decision's effect is judged on at least this much of what followed it (and its cool-down). */
    evidenceMs: z.number().int().positive().default(1_000),
    /** After a cut, a key is not cut again for this long (its effect must show first). */
    cooldownMs: z.number().int().min(0).default(10_000),
    /**
     * Recovery: a lowered key climbs back from its last cut every `everyMs` while its
     * signals stay below half of every threshold (hysteresis). Each step adds `step` of the
     * rate it was cut to; once past the rate where the trouble was, a tenth more with every
     * step since the cut: careful where the trouble began, faster the longer it stays calm.
     */
    recovery: z
      .strictObject({
        /** What each step adds, as a share of the rate the key was cut to. */
        step: z.number().gt(0).max(1).default(0.02),
        /** How often a lowered key steps back up. */
        everyMs: z.number().int().positive().default(1_000),
      })
      .prefault({}),
    /** The rules over the signals (`DEFAULT_GOVERNOR_RULES` when not given; given, they replace them all). */
    rules: z.array(ruleSchema).default(DEFAULT_GOVERNOR_RULES.map((r) => ruleSchema.parse(r))),
  })
  .superRefine((g, ctx) => {
    const seen = new Set<string>();
    g.rules.forEach((r, i) => {
      if (seen.has(r.id))
        ctx.addIssue({ code: 'custom', path: ['rules', i, 'id'], message: `repeats rule id ${r.id}` });
      seen.add(r.id);
    });
  });
