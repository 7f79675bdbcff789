import type { SluiceConfig } from './config.js';
import type { Keys, LayerKind } from './keys.js';

/**
 * A source of time in epoch milliseconds. Engines take one (`clock` option, default
 * `Date.now`) so their tests step time instead of sleeping.
 */
export type Clock = () => number;

/** The clock of the machine. */
export const systemClock: Clock = () => Date.now();

/** The IP pool a provider sends from (`providers.<id>.pool`); `default` for a provider the config does not name. */
export function poolOf(config: Pick<SluiceConfig, 'providers'>, provider: string): string {
  return config.providers[provider]?.pool ?? 'default';
}

/** What a circuit breaker is keyed by (docs/design/feedback-loop.md). */
export interface CircuitKey {
  /** The receiver bucket's name (a receiving organisation or a domain). */
  receiver: string;
  pool: string;
  stream: string;
}

/**
 * A circuit's id, `<receiver>|<pool>|<stream>`: the name its signals, adjustments field and
 * probe counters are kept under. Built and parsed only here.
 */
export function circuitId(key: CircuitKey): string {
  return `${key.receiver}|${key.pool}|${key.stream}`;
}

/** The parts of a circuit id made by {@link circuitId}. A stream may itself hold `|`: only the first two split. */
export function parseCircuitId(id: string): CircuitKey {
  const first = id.indexOf('|');
  const second = first < 0 ? -1 : id.indexOf('|', first + 1);
  if (first < 0 || second < 0) return { receiver: id, pool: '', stream: '' };
  return { receiver: id.slice(0, first), pool: id.slice(first + 1, second), stream: id.slice(second + 1) };
}

/** The names of a message's five quota layers (the campaign layer is `-` for transactional mail). */
export interface LayerNames {
  provider: string;
  receiver: string;
  pool: string;
  campaign: string;
  tenant: string;
}

/** A message's layer names from where it was routed: the pool follows the provider. */
export function layerNamesOf(
  config: Pick<SluiceConfig, 'providers'>,
  m: { provider: string; receiver: string; campaignId?: string | undefined; tenantId: string },
): LayerNames {
  return {
    provider: m.provider,
    receiver: m.receiver,
    pool: poolOf(config, m.provider),
    campaign: m.campaignId ?? '-',
    tenant: m.tenantId,
  };
}

/**
 * The layer keys of a message, in check order, with their kind: the one list every reader
 * of the five layers (admission, workers, overrides, explain) walks. A transactional
 * message has no campaign layer here.
 */
export function layerKeysOf(keys: Keys, names: LayerNames): { kind: LayerKind; name: string; key: string }[] {
  const out: { kind: LayerKind; name: string; key: string }[] = [];
  for (const kind of ['provider', 'receiver', 'pool', 'campaign', 'tenant'] as const) {
    if (kind === 'campaign' && names.campaign === '-') continue;
    out.push({ kind, name: names[kind], key: keys.bucket(kind, names[kind]) });
  }
  return out;
}
