export {
  createStore,
  type Store,
  type StoreOptions,
  type MessageRecord,
  type OutcomeDetails,
  type FinalizeDetails,
  type TransitionResult,
  type UnknownReply,
} from './store.js';
export { type AttemptEntry } from './attempt-entry.js';
export { messageId, injectedId, parseInjectedId } from './ids.js';
export { COMPACT_BLOCK } from './compact.js';
export {
  createOutcomes,
  type OutcomeEvent,
  type Outcomes,
  type OutcomesOptions,
  type ReadOptions,
  type SettleResult,
} from './outcomes.js';
export {
  createInjection,
  parseCursor,
  type InjectCursor,
  type InjectDeps,
  type InjectOptions,
  type InjectProgress,
  type InjectResult,
} from './inject.js';
export { DEFAULT_WINDOW, readWindow, type InjectWindow } from './inject-window.js';
export {
  SUPPRESSION_SOURCES,
  createSuppressions,
  decodeSuppression,
  encodeSuppression,
  type SuppressionEntry,
  type SuppressionPage,
  type SuppressionSource,
  type Suppressions,
  type SuppressionsOptions,
} from './suppressions.js';
export { createFeedback, type ApplyResult, type Feedback, type FeedbackOptions } from './feedback.js';
export { createQueues, type Queues, type QueuesOptions } from './queues.js';
export {
  campaignCancelledError,
  campaignInputSchema,
  createCampaigns,
  parseCampaign,
  type Campaign,
  type CampaignInput,
  type CampaignStatus,
  type Campaigns,
  type CampaignsOptions,
  type PauseOptions,
  type ResumeOptions,
} from './campaigns.js';
export { type CancelOptions, type CancelResult } from './campaign-cancel.js';
export {
  campaignArchivedError,
  type ArchiveOptions,
  type CampaignArchive,
  type ContentSummary,
} from './campaign-archive.js';
export { createCampaignArchiver, type CampaignArchiver, type CampaignArchiverOptions } from './campaign-archiver.js';
export { createCampaignWork, markWork, type CampaignWork } from './campaign-work.js';
export {
  connectRedis,
  createRedisHealth,
  isRedisConnectionError,
  redisUrlForLogs,
  type ConnectRedisOptions,
  type ErrorEmitter,
  type RedisHealth,
  type RedisHealthLogger,
  type RedisHealthOptions,
} from './redis-connection.js';
export {
  createLaunchStore,
  gateFor,
  launchForecastSchema,
  launchSummary,
  parseForecast,
  readGate,
  type LaunchForecastInput,
  type LaunchStore,
  type StoredLaunch,
} from './launch.js';
export { approveLaunch, launchCampaign, type ApproveOptions, type LaunchOptions } from './campaign-launch.js';
export {
  LAUNCH_KINDS,
  type LaunchChecks,
  type LaunchDecision,
  type LaunchForecast,
  type LaunchGate,
  type LaunchKind,
  type LaunchLimit,
  type LaunchReceiver,
  type LaunchRecord,
  type LaunchStop,
  type LaunchSummary,
  type LaunchWave,
  type StoredGate,
} from './launch-types.js';
export {
  ALIVE_MS,
  BEAT_MS,
  createHeartbeat,
  noteUnscheduled,
  readFleet,
  takeUnscheduled,
  type FleetProcess,
  type FleetRole,
  type FleetView,
  type Heartbeat,
  type HeartbeatOptions,
} from './fleet.js';
