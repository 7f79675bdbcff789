import type { KeyObject } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { SluiceError } from '@sluice/core';
import {
  SENDGRID_SIGNATURE_HEADER,
  SENDGRID_TIMESTAMP_HEADER,
  normalizeSendgridEvents,
  sendgridPublicKey,
  verifySendgridSignature,
} from '@sluice/events';
import { applyAll, type WebhookDeps } from './internal/deps.js';
import { STATUS_OF, refuse } from './internal/reply.js';

/** SendGrid batches events: a busy minute is a large body (and at most `SENDGRID_MAX_EVENTS` events). */
const BODY_LIMIT = 8 * 1024 * 1024;

/**
 * Reads the configured SendGrid key at start, so a wrong one fails there naming the field,
 * not on the first event.
 */
export function readSendgridKey(configured: string | undefined): KeyObject | undefined {
  try {
    return configured === undefined ? undefined : sendgridPublicKey(configured);
  } catch (cause) {
    throw new SluiceError(
      'invalid_config',
      'api.webhooks.sendgrid.publicKey: must be the base64 P-256 key SendGrid shows (MFkwEwYHKoZIzj0CAQYI…)',
      {
        path: 'api.webhooks.sendgrid.publicKey',
        cause,
      },
    );
  }
}

const header = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * `POST /webhooks/sendgrid`: SendGrid's signed Event Webhook. The signature covers the exact
 * bytes received, so the body is kept raw and parsed only once it verifies. Without a
 * configured key the route refuses everything: unsigned events are never taken.
 */
export async function registerSendgridWebhook(
  app: FastifyInstance,
  deps: WebhookDeps & { publicKey: KeyObject | undefined },
): Promise<void> {
  const key = deps.publicKey;

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_req, body, done) => done(null, body));

  app.post('/webhooks/sendgrid', { bodyLimit: BODY_LIMIT }, async (req, reply) => {
    if (key === undefined) {
      return refuse(
        reply,
        503,
        'not_configured',
        'no SendGrid verification key: set api.webhooks.sendgrid.publicKey or SENDGRID_WEBHOOK_PUBLIC_KEY',
      );
    }
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const verified = verifySendgridSignature(
      raw,
      header(req.headers[SENDGRID_SIGNATURE_HEADER]),
      header(req.headers[SENDGRID_TIMESTAMP_HEADER]),
      key,
      {
        maxAgeSeconds: deps.config.maxAgeSeconds,
      },
    );
    if (!verified.ok) {
      deps.logger.info({ event: 'webhook_refused', provider: 'sendgrid', code: verified.code }, verified.message);
      return refuse(reply, STATUS_OF[verified.code] ?? 400, verified.code, verified.message);
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return refuse(reply, 400, 'malformed', 'the body is not JSON');
    }
    // Every event checked before any is applied: a batch is taken whole or refused whole.
    const events = normalizeSendgridEvents(body, deps.eventWindow());
    if (!events.ok) {
      deps.logger.info({ event: 'webhook_refused', provider: 'sendgrid', code: events.code }, events.message);
      return refuse(reply, STATUS_OF[events.code] ?? 400, events.code, events.message, events.field);
    }
    const result = await applyAll(deps, events.value);
    deps.logger.info({ event: 'webhook_applied', provider: 'sendgrid', ...result }, 'SendGrid events applied');
    return result;
  });
}
