export { createScheduler, type Scheduler, type SchedulerOptions } from './scheduler.js';
export { createAdmission } from './admission/engine.js';
export {
  type Admission,
  type AdmissionOptions,
  type AdmissionResult,
  type AdmitContext,
  type HeldNote,
} from './admission/types.js';
export { OVERRIDE_RECHECK_MS } from './admission/overrides.js';
export { createWorker, type SluiceWorker, type WorkerOptions } from './worker.js';
export { backoffMs, planRetry, type RetryPlan } from './retry.js';
export { route, type RouteChoice, type RouteOptions } from './routing.js';
export { createWarmup, type Warmup, type WarmupDecision, type WarmupOptions } from './warmup.js';
export { watchQuotas, type QuotaWatchOptions } from './quota.js';
export { createOrganisations, type Organisations, type OrganisationsOptions } from './organisations.js';
export { createGovernor, type Governor, type GovernorDecision, type GovernorOptions } from './governor.js';
export { replyMatcher, type MatchedReply } from './reply-match.js';
export { createLatency, type Latency, type LatencyOptions } from './latency.js';
