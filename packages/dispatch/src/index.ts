export { createScheduler, type Scheduler, type SchedulerOptions } from './scheduler.js';
export { createWorker, type SluiceWorker, type WorkerOptions } from './worker.js';
export { backoffMs } from './retry.js';
