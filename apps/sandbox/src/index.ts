export { createSandbox, type Sandbox, type SandboxOptions } from './sandbox.js';
export { parseScenario, ScenarioError, type Scenario, type DomainBehaviour, type AccountQuota } from './scenario.js';
export { loadScenarioFile } from './scenario-file.js';
export type { AcceptedMessage, SandboxStats, DomainStats } from './recorder.js';
