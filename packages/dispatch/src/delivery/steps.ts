/**
 * The steps of one delivery a test can stop a worker at, in order:
 * - `taken`: the job is taken, nothing checked yet;
 * - `sending`: the checks are done and the request starts (nothing written yet: the mark
 *   counts the attempt);
 * - `withheld`: the request is out but for its final bytes, the `submitted` mark not written;
 * - `placed`: the arrival gate counted the send (`arrival.ts`), the mark not yet written;
 * - `marked`: the mark is in Redis, the final bytes not yet out;
 * - `answered`: the provider's outcome is in, the record not yet final (or retrying);
 * - `settled`: the record is final (or the retry booked), the job not yet acknowledged.
 */
export type DeliveryStep = 'taken' | 'sending' | 'withheld' | 'placed' | 'marked' | 'answered' | 'settled';

/**
 * A test hook called as a delivery passes each {@link DeliveryStep} (synchronously; what it
 * returns is ignored). Fault tests kill the process from it, to crash a worker at an exact
 * step. Production wires none.
 */
export type OnStep = (step: DeliveryStep, messageId: string) => void;
