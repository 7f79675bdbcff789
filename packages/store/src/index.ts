export {
  createStore,
  type Store,
  type StoreOptions,
  type MessageRecord,
  type OutcomeDetails,
  type FinalizeDetails,
  type TransitionResult,
  type BatchSubmitResult,
  type UnknownReply,
} from './records/store.js';
export { type AttemptEntry } from './records/attempt-entry.js';
export { type HeldNote } from './records/message-record.js';
export { type RecordFields, type RecordInspection } from './records/codec.js';
export { messageId, injectedId, parseInjectedId } from './records/ids.js';
export { COMPACT_BLOCK } from './records/compact.js';
export {
  createOutcomes,
  type OutcomeEvent,
  type Outcomes,
  type OutcomesOptions,
  type ReadOptions,
  type SettleResult,
} from './outcomes/outcomes.js';
export { capWindows, countIn, createPlans, type MessageCaps, type Plans, type PlansOptions } from './tenants/plans.js';
export {
  MAX_TENANT_GROUPS,
  TENANT_GROUP_PREFIX,
  holdsStream,
  tenantGroup,
  tenantGroupNames,
} from './outcomes/tenant-groups.js';
export {
  createInjection,
  parseCursor,
  type InjectCursor,
  type InjectDeps,
  type InjectOptions,
  type InjectProgress,
  type InjectResult,
} from './campaigns/inject.js';
export {
  DEFAULT_WINDOW,
  RATE_TAU_MS,
  createInjectionWindows,
  readWindow,
  type InjectWindow,
  type InjectionWindows,
} from './campaigns/inject-window.js';
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
} from './feedback/suppressions.js';
export { createFeedback, type ApplyResult, type Feedback, type FeedbackOptions } from './feedback/feedback.js';
export { createQueues, type Queues, type QueuesOptions } from './redis/queues.js';
export { createStorageGuard, storageOf } from './redis/storage.js';
export { createFillingBatches, type FilledBatch, type FillingBatches } from './redis/filling.js';
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
} from './campaigns/campaigns.js';
export { type CancelOptions, type CancelResult } from './campaigns/cancel.js';
export { campaignArchivedError, type ArchiveOptions } from './campaigns/archive.js';
export {
  type CampaignArchive,
  type CampaignCounts,
  type CampaignFlags,
  type ContentSummary,
  type StoredCampaign,
} from './campaigns/codec.js';
export { readCampaignFlags, readStoredCampaign, readStoredCampaigns } from './campaigns/read.js';
export { createCampaignArchiver, type CampaignArchiver, type CampaignArchiverOptions } from './campaigns/archiver.js';
export { createCampaignWork, markWork, type CampaignWork } from './campaigns/work.js';
export {
  connectEndpoint,
  connectRoles,
  type RoleConnections,
  connectRedis,
  createRedisHealth,
  isRedisConnectionError,
  redisUrlForLogs,
  type ConnectEndpointOptions,
  type ConnectRedisOptions,
  type ErrorEmitter,
  type RedisHealth,
  type RedisHealthLogger,
  type RedisHealthOptions,
  type RedisRole,
} from './redis/connection.js';
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
} from './campaigns/launch-store.js';
export { approveLaunch, launchCampaign, type ApproveOptions, type LaunchOptions } from './campaigns/launch.js';
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
} from './campaigns/launch-types.js';
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
} from './redis/fleet.js';
export {
  KEY_SCOPES,
  STATUS_PARTIES,
  keyInputSchema,
  type ApiKeyRecord,
  type KeyInput,
  type KeyScope,
  type StatusParty,
  type TenantRecord,
  type TenantStatus,
} from './tenants/codec.js';
export { KEY_ENVS, KEY_LENGTH, KEY_PATTERN, parseKeyToken, type KeyEnv, type ParsedKey } from './tenants/token.js';
export { type TenantAuditEntry, type TenantAuditKind } from './tenants/audit.js';
export {
  createTenants,
  tenantStopped,
  type StatusChange,
  type Tenants,
  type TenantsOptions,
} from './tenants/tenants.js';
export {
  MAX_ROTATION_OVERLAP_MS,
  createApiKeys,
  type ApiKeys,
  type ApiKeysOptions,
  type KeyActor,
  type NewApiKey,
} from './tenants/keys.js';
export {
  createAuthenticator,
  requireMessageAllowed,
  requireScope,
  requireSending,
  sourceAllowed,
  type Authenticated,
  type Authenticator,
  type AuthenticatorOptions,
} from './tenants/authenticate.js';
export {
  IDEMPOTENCY_CLAIM_MS,
  IDEMPOTENCY_KEEP_MS,
  createIdempotency,
  replayable,
  type Idempotency,
  type IdempotencyClaim,
  type IdempotencyScope,
} from './tenants/idempotency.js';
