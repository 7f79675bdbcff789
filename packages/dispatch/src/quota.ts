// Moved to control/ (issue 11); kept until the scheduler imports from there.
export { watchQuotas, type QuotaWatchOptions } from './control/quota.js';
