// Receiver scenarios that a fleet test and a bench row both run: one definition, so the
// bench keeps measuring what the test checks.

/** An SMTP relay with room to spare: the receivers' own limits are what binds. */
export const RELAY = {
  defaultProvider: 'relay',
  providers: { relay: { kind: 'smtp', sandbox: true, rate: 200, burst: 20, concurrency: 16 } },
};

/** One receiver blocks everything (550 5.7.1), another is fine; Sluice gives each 30/s. */
export const BLOCKING = {
  domains: { 'blocked.test': { block: ['*@blocked.test'] }, 'fine.test': {} },
  receivers: [
    { name: 'blocked', domains: ['blocked.test'], rate: 30, burst: 6 },
    { name: 'fine', domains: ['fine.test'], rate: 30, burst: 6 },
  ],
  /** Opens the circuit of a receiver that refuses over half of what it was sent. */
  rule: {
    id: 'blocks',
    signal: 'rejected:policy_block',
    over: 'attempted',
    above: 0.5,
    minVolume: 10,
    scope: 'circuit',
    open: { openForMs: 60_000, probes: 2 },
  },
  governor: { intervalMs: 250, evidenceMs: 200 },
};

/** A receiver taking 10/s that Sluice was told takes 40/s (above it: Gmail's 421 4.7.28), and a calm one. */
export const STORM = {
  domains: { 'storm.test': { rate: 10, burst: 3 }, 'calm.test': {} },
  receivers: [
    { name: 'storm', domains: ['storm.test'], rate: 40, burst: 8 },
    { name: 'calm', domains: ['calm.test'], rate: 40, burst: 8 },
  ],
  throttledRetry: { baseMs: 500, maxMs: 5_000 },
  backpressure: { cooldownMs: 500, holdMs: 20_000 },
};
