export { PRIORITY_CLASSES, type PriorityClass } from './priority.js';
export {
  ERROR_CODES,
  SluiceError,
  type ErrorCodeDoc,
  type SluiceErrorCode,
  type SluiceErrorOptions,
  type ErrorAction,
} from './errors.js';
export {
  campaignContentSchema,
  recipientSchema,
  parseRecipient,
  parseContent,
  compileContent,
  MAX_MERGE_DATA_BYTES,
  type CampaignContent,
  type CampaignContentInput,
  type CompiledContent,
  type Recipient,
  type RecipientInput,
  type RenderedContent,
} from './campaign-content.js';
export {
  messageInputSchema,
  parseMessage,
  expiresAt,
  recipientDomain,
  type MessageInput,
  type Message,
  type QueuedMessage,
  type InjectedFields,
  type MessageOrigin,
} from './message.js';
export {
  configSchema,
  parseConfig,
  type SluiceConfig,
  type ProviderConfig,
  type ProviderConfigOf,
  type ReceiverPolicy,
} from './config.js';
export { redisEndpoints, type RedisConfig, type RedisEndpoint, type RedisEndpoints } from './config-redis.js';
export { RETRY_DEFAULTS, RETENTIONS, type Retention, type RetrySchedule } from './config-delivery.js';
export { launchSchema } from './config-launch.js';
export { campaignsSchema } from './config-campaigns.js';
export { POOL_STATES, type PoolState } from './config-providers.js';
export { MAX_CONFIG_DEPTH } from './config-input.js';
export { cidr } from './config-fields.js';
export { MIN_TOKEN_BITS, tokenWeakness } from './config-surfaces.js';
export { CAP_WINDOWS, capsSchema, planSchema, type CapLimits, type CapWindow, type Plan } from './config-plans.js';
export {
  REPLY_FAMILIES,
  TEMPORARY_FAMILIES,
  PERMANENT_FAMILIES,
  RETRY_FAMILIES,
  type ReplyFamily,
  type RetryFamily,
} from './families.js';
export { loadConfig, DEFAULT_CONFIG_PATH, type LoadConfigOptions } from './load-config.js';
export {
  receiverFor,
  listedReceiver,
  receiverOfOrganisation,
  receiverNamed,
  organisationNamed,
  type ReceiverLimit,
} from './receivers.js';
export {
  BUILT_IN_ORGANISATIONS,
  ORGANISATIONS_VERSION,
  compileOrganisations,
  normalizeHost,
  type MxRecord,
  type OrganisationMatcher,
  type OrganisationPattern,
} from './organisations.js';
export {
  createKeys,
  parseBucket,
  parseInjectedId,
  campaignOfQueue,
  dispatchPartitionOf,
  homeOf,
  homeOfBlock,
  goneBit,
  stableHash,
  HOME_COUNT,
  HOMES,
  COMPACT_BLOCK,
  MAX_DISPATCH_PARTITIONS,
  LAYER_KINDS,
  type Keys,
  type LayerKind,
} from './keys.js';
export {
  systemClock,
  poolOf,
  circuitId,
  parseCircuitId,
  layerNamesOf,
  layerKeysOf,
  type Clock,
  type CircuitKey,
  type LayerNames,
} from './routes.js';
export { FINAL_STATES, MESSAGE_STATES, isFinalState, type FinalState, type MessageState } from './states.js';
export {
  INTAKE_JOB_OPTIONS,
  DISPATCH_JOB_OPTIONS,
  QUEUE_OPTIONS,
  jobIdOf,
  batchJobIdOf,
  blockJobIdOf,
  messagesOfJob,
  BATCH_JOB,
  BLOCK_JOB,
  type CampaignBlockData,
  type DispatchBatchData,
  type DispatchJobData,
  type IntakeJobData,
  type RetryCounts,
} from './jobs.js';
export { runService, type RunServiceOptions, type ServiceLogger } from './service.js';
export {
  configAndLogger,
  loggerOptions,
  hashRecipient,
  requestIdOf,
  requestSummary,
  REDACTED,
  type SluiceLoggerOptions,
} from './logger.js';
export { defineScripts, type ScriptHost, type ScriptTable, type WithScripts } from './lua.js';
export { parseInput } from './parse.js';
export {
  governorSchema,
  GOVERNED_SCOPES,
  DEFAULT_GOVERNOR_RULES,
  type GovernedScope,
  type GovernorRule,
} from './governor-config.js';
export { SCHEMA_VERSION, SLUICE_VERSION } from './version.js';
