// Moved to control/ (issue 11); kept until the scheduler imports from there.
export { createGovernor, type Governor, type GovernorDecision, type GovernorOptions } from './control/governor.js';
