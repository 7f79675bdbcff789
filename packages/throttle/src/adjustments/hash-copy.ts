import type { Clock } from '@sluice/core';
import type { ScriptedRedis } from '../internal/scripts.js';
import {
  adjustmentField,
  adjustmentNames,
  encodeAdjustment,
  readAdjustment,
  type AdjustmentFamily,
  type AdjustmentFields,
  type AdjustmentValue,
} from './codec.js';

/**
 * A process's copy of the adjustments hash, shared by the families of operations: read
 * again on `refresh()`, and kept up to date with this process's own writes meanwhile.
 * Values go through the codec both ways; nothing else here knows the wire format.
 */
export interface HashCopy {
  readonly redis: ScriptedRedis;
  /** The hash's key. */
  readonly key: string;
  /** What "now" is for expiries, holds and decision times. */
  readonly clock: Clock;
  /** The fields of the last read, with this process's writes since. */
  fields(): AdjustmentFields;
  get<F extends AdjustmentFamily>(family: F, name: string): AdjustmentValue<F> | undefined;
  names(family: AdjustmentFamily): string[];
  /** Changes the copy only (the caller writes Redis: in a transaction, or a script already did). */
  keep<F extends AdjustmentFamily>(family: F, name: string, value: AdjustmentValue<F> | undefined): void;
  /** Changes the copy, then writes the field (`undefined` deletes it). */
  write<F extends AdjustmentFamily>(family: F, name: string, value: AdjustmentValue<F> | undefined): Promise<void>;
  /** Reads the hash now, then tells every `onRefresh` listener. */
  refresh(): Promise<void>;
  /** Called with the fields after every read (to parse a family once a read, not once a message). */
  onRefresh(listener: (fields: AdjustmentFields) => void): void;
}

/** Creates an empty copy of the hash at `key`; nothing is read until `refresh()`. */
export function createHashCopy(redis: ScriptedRedis, key: string, clock: Clock): HashCopy {
  let fields: Record<string, string> = {};
  const listeners: ((fields: AdjustmentFields) => void)[] = [];

  const copy: HashCopy = {
    redis,
    key,
    clock,
    fields: () => fields,
    get: (family, name) => readAdjustment(fields, family, name),
    names: (family) => adjustmentNames(fields, family),
    keep(family, name, value) {
      const field = adjustmentField(family, name);
      if (value === undefined) delete fields[field];
      else fields[field] = encodeAdjustment(family, value);
    },
    async write(family, name, value) {
      const field = adjustmentField(family, name);
      if (value === undefined) {
        delete fields[field];
        await redis.hdel(key, field);
        return;
      }
      const raw = encodeAdjustment(family, value);
      fields[field] = raw;
      await redis.hset(key, field, raw);
    },
    async refresh() {
      fields = await redis.hgetall(key);
      for (const listener of listeners) listener(fields);
    },
    onRefresh(listener) {
      listeners.push(listener);
    },
  };
  return copy;
}
