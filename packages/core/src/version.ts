/**
 * The release of Sluice this code is (the version of every published package, which move
 * together): fleets publish it in their heartbeat, `sluice status` shows it.
 */
export const SLUICE_VERSION = '0.2.0';

/**
 * The version of what a client and a fleet share in Redis: key names, queue names, job data
 * and stored shapes (records, campaigns, outcomes). A client works with a fleet of the same
 * schema and refuses another (`fleet_incompatible`). Raised only by a change that an older
 * client or fleet would misread, with a migration; never for an added optional field.
 */
export const SCHEMA_VERSION = 2;
