export { createSandbox, type Sandbox, type SandboxOptions } from './sandbox.js';
export {
  parseScenario,
  ScenarioError,
  GMAIL_THROTTLE_REPLY,
  type Scenario,
  type DomainBehaviour,
  type AccountQuota,
  type WebhookTargets,
  type Silence,
} from './scenario.js';
export { loadScenarioFile } from './scenario-file.js';
export type { AcceptedMessage, Keep, Protocol, SandboxStats, DomainStats, WebhookReport } from './recorder.js';
export type { WebhookKeys } from './internal/context.js';
