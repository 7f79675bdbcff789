export type {
  AuditEntry,
  CampaignLaunch,
  Explanation,
  Alert,
  KeyStatus,
  Override,
  OverrideKind,
  QueueStatus,
  StatusSnapshot,
} from './types.js';
export { createStatus, type Status, type StatusOptions } from './status.js';
export {
  createOverrides,
  OVERRIDE_MAX_MS,
  type Overrides,
  type OverridesOptions,
  type SetOverrideInput,
} from './overrides.js';
export { explain, type ExplainOptions } from './explain.js';
export {
  archiveCampaign,
  cancelCampaign,
  deleteCampaign,
  type CancelCampaignDeps,
  type CancelCampaignOptions,
  type CancelCampaignResult,
  type EndCampaignOptions,
} from './campaigns.js';
export {
  registerFleetMetrics,
  fleetMetrics,
  createMetricsHandler,
  serveMetrics,
  FLEET_METRIC_NAMES,
  type FleetMetric,
  type FleetMetricsOptions,
  type MetricsRegistry,
  type MetricsHandler,
  type MetricsHandlerOptions,
  type MetricsServer,
} from './metrics.js';
export {
  startMetrics,
  createProcessRegistry,
  registerRedisUp,
  registerSandboxProviders,
  type StartMetricsOptions,
} from './metrics-server.js';
export { startHealth, type HealthOptions, type HealthServer, type Readiness } from './health.js';
export { createDeliveryMetrics, type DeliveryCounters } from './delivery-metrics.js';
export { httpLogging, answerRequestIds } from './http-logging.js';
export {
  migrateKeyLayout,
  MigrationRefusedError,
  KEY_LAYOUT,
  FLEET_QUIET_MS,
  LAYOUT_KINDS,
  type LayoutKind,
  type MigrateLayoutOptions,
  type MigrationRefusal,
  type MigrationReport,
} from './migrate-layout.js';
