import type { Redis } from 'ioredis';
import type { Keys } from '@sluice/core';
import type { HashRead } from '../redis/hash-read.js';
import { RECORD_TENANT } from './codec.js';

/** Some fields of a message's record (one HMGET), decoded by the record's codec. */
export async function readRecordFields<T>(redis: Redis, keys: Keys, id: string, what: HashRead<T>): Promise<T> {
  return what.decode(await redis.hmget(keys.message(id), ...what.fields));
}

/** The tenant a message's record names ('default' when it names none, or is gone). */
export function readRecordTenant(redis: Redis, keys: Keys, id: string): Promise<string> {
  return readRecordFields(redis, keys, id, RECORD_TENANT);
}
