export {
  createLimiter,
  type Limiter,
  type LimiterOptions,
  type LayerLimit,
  type Layers,
  type AdmitRequest,
  type AdmitResult,
  type Ticket,
  type ArriveRequest,
  type ArriveResult,
  type ArriveBatchRequest,
  type ArriveBatchResult,
  MAX_GATED,
} from './limiter.js';
export type { CapCounter, CapReached } from './caps.js';
export {
  withLocalShare,
  createLocalBuckets,
  type LocalShareLimiter,
  type LocalShareOptions,
  type LocalBuckets,
} from './local-share.js';
export { createSlots, type Slots, type SlotsOptions } from './slots.js';
export { quotaLayers, type CampaignLimit, type LayerAdjustments, type LayerSubject } from './layers.js';
export {
  createAdjustments,
  MAX_RECIPIENT_HOLDS,
  overrideField,
  removeOverride,
  slowFactor,
  sweepOverrides,
  adjustmentEntries,
  adjustmentField,
  adjustmentNames,
  decodeAdjustment,
  encodeAdjustment,
  readAdjustment,
  type Adjustments,
  type AdjustmentsOptions,
  type BackpressureOptions,
  type ProviderStanding,
  type CircuitState,
  type Governed,
  type WarmupState,
  type OverrideKind,
  type OverrideState,
  type AdjustmentFamily,
  type AdjustmentFields,
  type AdjustmentValue,
  type CampaignPause,
  type ProviderHold,
  type SlowState,
} from './adjustments/index.js';
export {
  createSignals,
  type Signals,
  type SignalsOptions,
  type SignalKey,
  type SignalKind,
  type SignalField,
  type SignalWindow,
} from './signals.js';
export { createLease, type Lease, type LeaseOptions } from './lease.js';
export { foldTotals, SETTLE_MS, type Totals } from './totals.js';
export {
  allocateBudget,
  partitionedShare,
  shareInForce,
  type AllocateOptions,
  type PartitionedShareOptions,
  type RegionDemand,
  type ShareInForceOptions,
} from './regions.js';
