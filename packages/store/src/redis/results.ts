// What the store's Lua scripts answer, as typed results (STYLE.md, Lua): each script returns
// numeric codes, and here, in one module, each script has one enum of its codes and one function
// that maps its reply to a typed result. Nothing matches on an error string. What a code means
// is written in its script's header comment (`src/lua/<name>-<keys>.lua`).

/** The name of `code` in an enum of codes; undefined for a code the enum does not have. */
function nameOf<K extends string>(codes: Readonly<Record<K, number>>, code: unknown): K | undefined {
  return (Object.keys(codes) as K[]).find((k) => codes[k] === Number(code));
}

/** accept-4.lua's first value. */
export const ACCEPT_CODE = { exists: 0, created: 1 } as const;

/** accept-4.lua's reply `{ code, state }`: the record made now, or the one there was (`final`: gone once acknowledged). */
export function acceptResult(reply: unknown): { created: boolean; state: string } {
  const [code, state] = reply as [number, string];
  return { created: nameOf(ACCEPT_CODE, code) === 'created', state };
}

/** transition-3.lua's first value. */
export const TRANSITION_CODE = { missing: -1, final: 0, moved: 1, held: 2, skipped: 3 } as const;

/** What a move of a message's record did (`markSending`, `markSubmitted`, …). */
export interface TransitionResult {
  /**
   * `moved`; `final` (already final: do nothing); `missing` (no record); `held` (an attempt
   * while its campaign is paused: nothing changed); `skipped` (not in a state the move is
   * made from: nothing changed).
   */
  result: keyof typeof TRANSITION_CODE;
  /** The state before (or the final one). */
  state: string;
  attempts: number;
  /** The previous attempt was submitted in full but never recorded its outcome. */
  ambiguous: boolean;
}

/** transition-3.lua's reply `{ code, state, attempts, ambiguous }` (a code it does not have reads as `missing`). */
export function transitionResult(reply: unknown): TransitionResult {
  const [code, state, attempts, ambiguous] = reply as [number, string, number, number];
  return {
    result: nameOf(TRANSITION_CODE, code) ?? 'missing',
    state,
    attempts,
    ambiguous: ambiguous === 1,
  };
}

/** What the batch's submit mark did (`markSubmittedBatch`): all moved, held, or refused for some. */
export type BatchSubmitResult =
  /** Every record moved to `submitted`; each one's attempt number, in the order given. */
  | { result: 'moved'; attempts: number[] }
  /** The campaign is paused: nothing changed. */
  | { result: 'held' }
  /**
   * Nothing changed: these may not go (final already, missing, or `submitted` by another run);
   * `index` is their place among the records given.
   */
  | { result: 'refused'; refused: { index: number; result: 'missing' | 'final' | 'skipped'; state: string }[] };

/** submit-n.lua's reply. */
export function batchSubmitResult(reply: unknown): BatchSubmitResult {
  const [code, ...rest] = reply as [number, ...(number | string)[]];
  if (code === 1) return { result: 'moved', attempts: rest.map(Number) };
  if (code === 2) return { result: 'held' };
  const refused: { index: number; result: 'missing' | 'final' | 'skipped'; state: string }[] = [];
  for (let i = 0; i + 2 < rest.length; i += 3) {
    const result = nameOf(TRANSITION_CODE, rest[i + 1]);
    refused.push({
      index: Number(rest[i]) - 1,
      result: result === 'final' || result === 'skipped' ? result : 'missing',
      state: String(rest[i + 2]),
    });
  }
  return { result: 'refused', refused };
}

/** finalize-n.lua's code of a message. */
export const FINALIZE_CODE = { missing: -1, final: 0, finalized: 1, skipped: 2 } as const;

/** What finalize-n.lua did to one message. */
export interface FinalizeResult {
  result: keyof typeof FINALIZE_CODE;
  state: string;
}

/**
 * finalize-n.lua's reply, `{ code, state }` per message: `finalized` now (state: the one
 * written), `final` already (that one), `missing` (no record), `skipped` (not in a state it may
 * end from).
 */
export function finalizeResults(reply: unknown): FinalizeResult[] {
  const flat = reply as (number | string)[];
  const out: FinalizeResult[] = [];
  for (let i = 0; i < flat.length; i += 2)
    out.push({ result: nameOf(FINALIZE_CODE, flat[i]) ?? 'missing', state: String(flat[i + 1]) });
  return out;
}

/** retain-4.lua's reply. */
export const RETAIN_CODE = { kept: 0, compacted: 1, shrunk: 2, deleted: 3 } as const;

/** What retain-4.lua did to one record: left it, moved it into its block, shrunk it in place, or deleted it. */
export function retainResult(reply: unknown): keyof typeof RETAIN_CODE {
  return nameOf(RETAIN_CODE, reply) ?? 'kept';
}

/** apply-event-3.lua's first value. */
export const APPLY_EVENT_CODE = { duplicate: 0, applied: 1, suppressed: 2, alreadySuppressed: 3 } as const;

/** apply-event-3.lua's reply `{ code, softBounces }`. */
export function applyEventResult(reply: unknown): { result: keyof typeof APPLY_EVENT_CODE; softBounces: number } {
  const [code, softBounces] = reply as [number, number];
  return { result: nameOf(APPLY_EVENT_CODE, code) ?? 'applied', softBounces };
}

/** resume-campaign-1.lua's reply. */
export const RESUME_CODE = { unknown: -1, cancelled: 0, cleared: 1 } as const;

/** Whether resume-campaign-1.lua cleared the pause flag, found the campaign cancelled, or none. */
export function resumeResult(reply: unknown): keyof typeof RESUME_CODE {
  return nameOf(RESUME_CODE, reply) ?? 'unknown';
}

/** archive-campaign-5.lua's reply. */
export const END_CODE = { accepted: -3, unknown: -1, already: 0, done: 1 } as const;

/**
 * What archiving a campaign did: `done`, `already` (archived before), `unknown` (no campaign),
 * `accepted` (a job was added to its queue since the caller found it finished: nothing changed).
 */
export function endResult(reply: unknown): keyof typeof END_CODE {
  return nameOf(END_CODE, reply) ?? 'unknown';
}

/** delete-campaign-5.lua's reply. */
export const DELETE_CODE = { accepted: -3, unknown: -1, archived: 0, active: 1 } as const;

/**
 * What deleting a campaign did: `active` or `archived` (deleted, and which it was), `unknown`
 * (no campaign), `accepted` (a job was added to its queue since the caller looked).
 */
export function deleteResult(reply: unknown): keyof typeof DELETE_CODE {
  return nameOf(DELETE_CODE, reply) ?? 'unknown';
}

/** launch-swap-1.lua's reply: the new version, or 0 when the version moved (nothing written). */
export function launchSwapResult(reply: unknown): { written: boolean; version: number } {
  const version = Number(reply);
  return { written: version > 0, version };
}

/** prune-work-1.lua's reply. */
export const PRUNE_CODE = { kept: 0, pruned: 1 } as const;

/** Whether prune-work-1.lua took the campaign out of the campaigns with work. */
export function pruneResult(reply: unknown): boolean {
  return nameOf(PRUNE_CODE, reply) === 'pruned';
}

/** idem-claim-1.lua's first value. */
export const IDEM_CLAIM_CODE = { claimed: 1, answered: 2, otherBody: 3, inFlight: 4 } as const;

/** What an `Idempotency-Key` held when a request claimed it. */
export type IdemClaim =
  { kind: 'claimed' | 'otherBody' | 'inFlight' } | { kind: 'answered'; status: number; body: string };

/** idem-claim-1.lua's reply `{ code, status?, body? }` (a code it does not have reads as `inFlight`). */
export function idemClaimResult(reply: unknown): IdemClaim {
  const [code, status, body] = reply as [number, string | undefined, string | undefined];
  const kind = nameOf(IDEM_CLAIM_CODE, code) ?? 'inFlight';
  return kind === 'answered' ? { kind, status: Number(status), body: body ?? '' } : { kind };
}
