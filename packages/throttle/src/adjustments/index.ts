import { systemClock } from '@sluice/core';
import { defineScripts } from '../internal/scripts.js';
import { createCampaignPauses } from './campaign-pauses.js';
import { createCircuits } from './circuits.js';
import { createFactors } from './factors.js';
import { createHashCopy } from './hash-copy.js';
import { createOverrideReader } from './overrides.js';
import { createProviders } from './providers.js';
import { createRecipientHolds } from './recipient-holds.js';
import type { Adjustments, AdjustmentsOptions } from './types.js';
import { createWarmups } from './warmup.js';

export {
  adjustmentEntries,
  adjustmentField,
  adjustmentNames,
  decodeAdjustment,
  encodeAdjustment,
  overrideField,
  readAdjustment,
  type AdjustmentFamily,
  type AdjustmentFields,
  type AdjustmentValue,
  type CampaignPause,
  type CircuitState,
  type Governed,
  type OverrideKind,
  type OverrideState,
  type ProviderHold,
  type SlowState,
  type WarmupState,
} from './codec.js';
export { slowFactor } from './factors.js';
export { removeOverride, sweepOverrides } from './overrides.js';
export { MAX_RECIPIENT_HOLDS } from './recipient-holds.js';
export type { Adjustments, AdjustmentsOptions, BackpressureOptions, ProviderStanding } from './types.js';

/**
 * Creates the shared adjustments of one deployment: each family of operations over one
 * copy of the hash, read again every `refreshMs` once started.
 */
export function createAdjustments(options: AdjustmentsOptions): Adjustments {
  const copy = createHashCopy(defineScripts(options.redis), options.keys.adjustments(), options.clock ?? systemClock);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const lifecycle: Pick<Adjustments, 'start' | 'refresh' | 'close'> = {
    async start() {
      await copy.refresh();
      const loop = (): void => {
        timer = setTimeout(() => {
          copy
            .refresh()
            .catch(() => undefined) // keeps the last copy; Redis errors surface on the hot path
            .finally(() => {
              if (!closed) loop();
            });
        }, options.refreshMs ?? 250);
        timer.unref();
      };
      loop();
    },
    refresh: () => copy.refresh(),
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
    },
  };

  return {
    ...lifecycle,
    ...createFactors(copy, options.backpressure),
    ...createOverrideReader(copy),
    ...createCircuits(copy),
    ...createCampaignPauses(copy),
    ...createWarmups(copy),
    ...createProviders(copy),
    ...createRecipientHolds(copy),
  };
}
