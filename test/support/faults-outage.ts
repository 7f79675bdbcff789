// How long the fault suite's Redis outage lasts: 30 s, as issue 12 measured it, unless
// SLUICE_FAULTS_OUTAGE_MS shortens it for a local run (read here: lint allows process.env
// only in test/support/).

/** The outage of `redis-outage`, in ms: `SLUICE_FAULTS_OUTAGE_MS`, else 30 s. */
export function faultsOutageMs(): number {
  const given = process.env.SLUICE_FAULTS_OUTAGE_MS;
  if (given === undefined || given === '') return 30_000;
  const ms = Number(given);
  if (!Number.isSafeInteger(ms) || ms < 1_000) {
    throw new Error(`SLUICE_FAULTS_OUTAGE_MS must be a whole number of ms >= 1000, got ${given}`);
  }
  return ms;
}
