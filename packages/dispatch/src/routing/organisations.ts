import { Resolver } from 'node:dns/promises';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import {
  BUILT_IN_ORGANISATIONS,
  ORGANISATIONS_VERSION,
  compileOrganisations,
  listedReceiver,
  normalizeHost,
  receiverOfOrganisation,
  type ReceiverLimit,
  type SluiceConfig,
} from '@sluice/core';

/** Options of {@link createOrganisations}. */
export interface OrganisationsOptions {
  config: SluiceConfig;
  logger: Pick<Logger, 'warn'>;
}

/**
 * Maps recipient domains to the organisations that receive their mail. It lives in
 * dispatch, not throttle or core: it does network I/O (DNS) and only the scheduler asks
 * it, once per message before the quota call; the limiter stays pure Redis and core
 * stays free of I/O. Workers never ask: the receiver's name travels on the dispatch job.
 */
export interface Organisations {
  /** The domain's organisation by its MX hosts; undefined: it stands alone. Never rejects. */
  organisationOf(domain: string): Promise<string | undefined>;
  /**
   * The domain's receiver bucket: a policy listing the domain (no DNS), else by its
   * organisation (`receiverOfOrganisation`). Never rejects.
   */
  receiverOf(domain: string): Promise<ReceiverLimit>;
  /**
   * The domain's receiver when it is known without waiting (listed by a policy, cached, or
   * no organisation can match); undefined: ask {@link receiverOf}. Lets the scheduler's hot
   * path stay free of awaits.
   */
  knownReceiverOf(domain: string): ReceiverLimit | undefined;
  /** DNS queries sent so far (cache misses). */
  readonly lookups: number;
  /** Cancels lookups in flight (they resolve as standing alone) and empties the cache. */
  close(): void;
}

interface Entry {
  organisation: string | undefined;
  /** The same answer as a settled promise, so a hit hands it out without a new allocation. */
  promise: Promise<string | undefined>;
}

/** Answers that say the domain has no MX to match, as opposed to DNS not answering. */
const NO_MX = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * Creates the organisation resolver: an MX lookup per domain, matched against
 * `organisations.patterns` then the built-in table, cached in this process (positive
 * answers for `cacheTtlMs`, anything else for `negativeTtlMs`, at most `cacheSize`
 * domains), one lookup per domain at a time. A failure or a timeout leaves the domain
 * standing alone: admission is never held longer than `timeoutMs` and never fails on DNS.
 */
export function createOrganisations(options: OrganisationsOptions): Organisations {
  const { config, logger } = options;
  const settings = config.organisations;
  const patterns = [...settings.patterns, ...(settings.builtIn ? BUILT_IN_ORGANISATIONS : [])];
  const match = compileOrganisations(patterns);
  // One try: c-ares would otherwise try 4 times, each with a longer timeout.
  const resolver = new Resolver({ timeout: settings.timeoutMs, tries: 1 });
  if (settings.dnsServers.length > 0) resolver.setServers(settings.dnsServers);
  // Least recently used out first; each answer expires after its own TTL (a hit does not
  // extend it), and an expired one is never handed out.
  const cache = new LRUCache<string, Entry>({ max: settings.cacheSize });
  const inFlight = new Map<string, Promise<string | undefined>>();
  let lookups = 0;
  let closed = false;

  function remember(domain: string, organisation: string | undefined, ttlMs: number): void {
    cache.set(domain, { organisation, promise: Promise.resolve(organisation) }, { ttl: ttlMs });
  }

  async function lookup(domain: string): Promise<string | undefined> {
    lookups++;
    // c-ares may try again (without EDNS) after its timeout, doubling the wait: the deadline
    // here is what bounds admission.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), settings.timeoutMs);
    });
    try {
      const records = await Promise.race([resolver.resolveMx(domain), deadline]);
      if (records === 'timeout')
        throw Object.assign(new Error(`MX lookup of ${domain} timed out`), { code: 'ETIMEOUT' });
      const organisation = match(records);
      remember(domain, organisation, settings.cacheTtlMs);
      return organisation;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // SERVFAIL, timeout, refused: we do not know, so the domain stands alone for now and
      // is asked again soon; NXDOMAIN or no MX records is an answer, kept as long.
      if (!closed && !NO_MX.has(code ?? '')) {
        logger.warn(
          { domain, code, table: ORGANISATIONS_VERSION },
          'MX lookup failed: the domain stands alone for now',
        );
      }
      if (!closed) remember(domain, undefined, settings.negativeTtlMs);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  function organisationOf(name: string): Promise<string | undefined> {
    const domain = normalizeHost(name);
    if (patterns.length === 0 || closed) return Promise.resolve(undefined);
    const hit = cache.get(domain);
    if (hit) return hit.promise;
    let pending = inFlight.get(domain);
    if (!pending) {
      pending = lookup(domain).finally(() => inFlight.delete(domain));
      inFlight.set(domain, pending);
    }
    return pending;
  }

  return {
    organisationOf,
    async receiverOf(name) {
      const domain = normalizeHost(name);
      return listedReceiver(config, domain) ?? receiverOfOrganisation(config, domain, await organisationOf(domain));
    },
    knownReceiverOf(name) {
      const domain = normalizeHost(name);
      const listed = listedReceiver(config, domain);
      if (listed) return listed;
      if (patterns.length === 0 || closed) return receiverOfOrganisation(config, domain, undefined);
      const hit = cache.get(domain);
      return hit ? receiverOfOrganisation(config, domain, hit.organisation) : undefined;
    },
    get lookups() {
      return lookups;
    },
    close() {
      closed = true;
      resolver.cancel();
      cache.clear();
    },
  };
}
