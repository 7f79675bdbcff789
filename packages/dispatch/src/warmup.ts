// Moved to control/ (issue 11); kept until the scheduler imports from there.
export { createWarmup, type Warmup, type WarmupDecision, type WarmupOptions } from './control/warmup.js';
