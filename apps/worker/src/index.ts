export { createWorker, type SluiceWorker, type WorkerOptions } from './worker.js';
export { backoffMs } from './retry.js';
