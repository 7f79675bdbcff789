export { createScheduler, type Scheduler, type SchedulerOptions } from './scheduler.js';
export { createAdmission } from './admission/engine.js';
export { createBatcher, type Batcher, type BatcherOptions } from './admission/batcher.js';
export {
  type Admission,
  type AdmissionOptions,
  type AdmissionResult,
  type AdmitContext,
  type HeldNote,
} from './admission/types.js';
export { OVERRIDE_RECHECK_MS } from './admission/overrides.js';
export { createWorker, type SluiceWorker, type WorkerOptions } from './worker.js';
export {
  createDelivery,
  type Delivery,
  type DeliveryGate,
  type DeliveryOptions,
  type DeliveryResult,
} from './delivery/engine.js';
export type { DeliveryJob } from './delivery/precheck.js';
export type { DeliveryBatchJob } from './delivery/batch.js';
export { NO_DELIVERY_METRICS, type AttemptLabels, type DeliveryMetrics } from './delivery/metrics.js';
export type { DeliveryStep, OnStep } from './delivery/steps.js';
export { SlotGate } from './delivery/gate.js';
export { backoffMs, planRetry, type RetryPlan } from './delivery/retry.js';
export { route, type RouteChoice, type RouteOptions } from './routing/route.js';
export { createWarmup, type Warmup, type WarmupDecision, type WarmupOptions } from './control/warmup.js';
export { watchQuotas, type QuotaWatchOptions } from './control/quota.js';
export { createOrganisations, type Organisations, type OrganisationsOptions } from './routing/organisations.js';
export { createGovernor, type Governor, type GovernorDecision, type GovernorOptions } from './control/governor.js';
export { replyMatcher, type MatchedReply } from './delivery/reply-match.js';
export { createLatency, type Latency, type LatencyOptions } from './delivery/latency.js';
export {
  bindingShared,
  decideLaunch,
  projectReceivers,
  shareRates,
  wavesOf,
  type Projected,
  type ProjectedReceiver,
  type ProjectionInput,
} from './launch/project.js';
export { createLaunchChore, type LaunchChore, type LaunchChoreOptions } from './launch/chore.js';
export { storageOf } from '@sluice/store';
export { readInputs, type AccountQuota, type InputDeps, type LaunchSubject } from './launch/inputs.js';
