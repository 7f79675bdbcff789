import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { SluiceError, type Keys } from '@sluice/core';
import { defineScripts, type StoreRedis } from '../redis/scripts.js';
import { idemClaimResult } from '../redis/results.js';

/** How long an answer is kept for a repeat of its request: 24 h. */
export const IDEMPOTENCY_KEEP_MS = 24 * 60 * 60 * 1000;
/** How long a claim lasts unanswered (its request died, or its api process): then the key is free again. */
export const IDEMPOTENCY_CLAIM_MS = 60_000;
/** When a request that found its key in flight is told to retry. */
const IN_FLIGHT_RETRY_MS = 1_000;
/** An `Idempotency-Key`: 1 to 255 visible ASCII characters. */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

/** Which request an `Idempotency-Key` belongs to: the API key, the route, the header's value. */
export interface IdempotencyScope {
  tenantId: string;
  keyId: string;
  /** The route's method and pattern (`POST /v1/messages`). */
  route: string;
  /** The header's value. */
  idempotencyKey: string;
}

/** What {@link Idempotency.claim} found. */
export type IdempotencyClaim =
  /** The request goes on; settle it with its answer. */
  | { kind: 'claimed'; settle: (status: number, body: string) => Promise<void> }
  /** The same request was answered before: replay this answer. */
  | { kind: 'replay'; status: number; body: string };

/** The `Idempotency-Key` of the HTTP ingest (docs/design/tenants-and-keys.md). */
export interface Idempotency {
  /**
   * Claims the key for a request with this body, or finds its earlier answer. Throws
   * `idempotency_key_invalid` for a bad header, `idempotency_key_reused` when the key was used
   * with another body, and `idempotency_in_flight` (retry) while its first request is answered.
   */
  claim(scope: IdempotencyScope, body: unknown): Promise<IdempotencyClaim>;
}

/**
 * An answer is kept for a repeat when it says what the request did or why it was refused for
 * good: a success, a bad body (400), a message not found (404), a conflict of the request's own
 * (409, 422). A server error, a refusal of the key (401, 403) or a limit (429) may change, so the
 * key is let go and a repeat runs again.
 */
export function replayable(status: number): boolean {
  return status < 400 || [400, 404, 409, 422].includes(status);
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The `Idempotency-Key`s of the ingest, on the queues' Redis, each under its tenant's tag. */
export function createIdempotency(options: { redis: Redis; keys: Keys }): Idempotency {
  const redis: StoreRedis = defineScripts(options.redis);
  const { keys } = options;
  return {
    async claim(scope, body) {
      if (!VALID_KEY.test(scope.idempotencyKey)) {
        throw new SluiceError('idempotency_key_invalid', 'Idempotency-Key: must be 1 to 255 visible ASCII characters', {
          path: 'Idempotency-Key',
        });
      }
      const route = sha256(scope.route).slice(0, 12);
      const key = keys.idempotency(scope.tenantId, scope.keyId, route, sha256(scope.idempotencyKey).slice(0, 32));
      const token = randomBytes(12).toString('hex');
      const found = idemClaimResult(
        await redis.sluiceIdemClaim(key, sha256(JSON.stringify(body) ?? ''), token, IDEMPOTENCY_CLAIM_MS),
      );
      switch (found.kind) {
        case 'claimed':
          return {
            kind: 'claimed',
            settle: async (status, answer) => {
              if (replayable(status))
                await redis.sluiceIdemSettle(key, token, 'keep', status, answer, IDEMPOTENCY_KEEP_MS);
              else await redis.sluiceIdemSettle(key, token, 'drop');
            },
          };
        case 'answered':
          return { kind: 'replay', status: found.status, body: found.body };
        case 'otherBody':
          throw new SluiceError(
            'idempotency_key_reused',
            `Idempotency-Key: used on ${scope.route} within 24 h with another body`,
            { path: 'Idempotency-Key' },
          );
        default:
          throw new SluiceError('idempotency_in_flight', 'Idempotency-Key: its first request is still being answered', {
            path: 'Idempotency-Key',
            action: 'retry',
            retryAfterMs: IN_FLIGHT_RETRY_MS,
          });
      }
    },
  };
}
