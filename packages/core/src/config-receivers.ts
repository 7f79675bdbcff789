import { z } from 'zod';
import { burst, host, name, rate } from './config-fields.js';

// Where mail goes to: receiving organisations by domain or by MX host, each one bucket.

/** One receiver policy: a receiving organisation's bucket, by its domains or by its MX hosts. */
export const receiverSchema = z.strictObject({
  /** The receiving organisation's key: one bucket for all its domains. */
  name,
  /** Exact domains, or `*.example.com` for a domain and its subdomains. Needed unless `organisation` is set. */
  domains: z.array(host.toLowerCase()).min(1).optional(),
  /** An organisation (`organisations`): every domain whose MX hosts are that organisation's. */
  organisation: name.optional(),
  rate,
  burst: burst.optional(),
  /**
   * Sends in flight to this receiver at once, per worker process (its connection slots, as
   * Postfix's destination concurrency is per instance). A reply saying "too many connections"
   * lowers them fleet-wide, and they come back as a lowered rate does (`backpressure`).
   * @defaultValue none: as many as the worker's provider slots allow
   */
  connections: z.number().int().positive().optional(),
});

const organisationPatternSchema = z.strictObject({
  /** The organisation's name: its receiver bucket's (a `receivers` entry may give it limits). */
  name,
  /** MX host globs: `*` matches any characters, dots included (`*.mail.protection.outlook.com`). */
  mx: z.array(host.toLowerCase()).min(1),
});

/**
 * Receiving organisations by MX host (docs/design/flow.md, check order): a domain whose MX
 * hosts are Google's shares Google's receiver bucket. Looked up by the scheduler only.
 */
export const organisationsSchema = z
  .strictObject({
    /** Extra organisations, matched before the built-in table. */
    patterns: z.array(organisationPatternSchema).default([]),
    /**
     * Use the built-in table (`BUILT_IN_ORGANISATIONS`, `ORGANISATIONS_VERSION`). `false`,
     * with no `patterns`, turns MX lookups off: the scheduler asks DNS nothing, and a domain
     * that no `receivers` entry lists is a bucket of its own (`defaults.receiver`).
     * @defaultValue `true`
     */
    builtIn: z.boolean().default(true),
    /** How long a domain's answer is kept. */
    cacheTtlMs: z.number().int().positive().default(3_600_000),
    /** How long a failed lookup, NXDOMAIN or no MX leaves the domain standing alone before asking again. */
    negativeTtlMs: z.number().int().positive().default(300_000),
    /** Domains kept in the cache (least recently used go first). */
    cacheSize: z.number().int().positive().default(100_000),
    /** `host:port` of the DNS servers to ask; empty means the system's resolver. */
    dnsServers: z.array(host).default([]),
    /** Per lookup: a domain whose DNS is slower stands alone for `negativeTtlMs`. */
    timeoutMs: z.number().int().positive().default(2_000),
  })
  .prefault({});
