import type { FastifyInstance } from 'fastify';
import {
  normalizeMailgunEvent,
  parseMailgunSignature,
  verifyMailgunSignature,
  type VerifyFailure,
} from '@sluice/events';
import { BODY_LIMIT, applyAll, type WebhookDeps } from './internal/deps.js';
import { STATUS_OF, refuse } from './internal/reply.js';

/**
 * `POST /webhooks/mailgun`: Mailgun's JSON webhooks, one event a request (at most
 * `BODY_LIMIT` bytes). A signature verifies the timestamp and token only, so a token is
 * accepted once (remembered for the freshness window, after which the timestamp refuses it
 * anyway). A replay answers 406, which Mailgun never retries, unless the first delivery
 * never finished applying its event (the api died): then the retry applies it. The event is checked before
 * the token is remembered, so a malformed one (400, naming the field) writes nothing.
 */
/** A token whose event is being applied (see the route). */
const APPLYING = 'applying';

export async function registerMailgunWebhook(app: FastifyInstance, deps: WebhookDeps): Promise<void> {
  const signingKey = deps.config.mailgun.signingKey;
  const maxAgeSeconds = deps.config.maxAgeSeconds;

  app.post('/webhooks/mailgun', { bodyLimit: BODY_LIMIT }, async (req, reply) => {
    if (signingKey === undefined) {
      return refuse(
        reply,
        503,
        'not_configured',
        'no Mailgun signing key: set api.webhooks.mailgun.signingKey or MAILGUN_WEBHOOK_SIGNING_KEY',
      );
    }
    const refused = (f: VerifyFailure) => {
      deps.logger.info({ event: 'webhook_refused', provider: 'mailgun', code: f.code }, f.message);
      return refuse(reply, STATUS_OF[f.code] ?? 400, f.code, f.message, f.field);
    };
    const parsed = parseMailgunSignature(req.body);
    if (!parsed.ok) return refused(parsed);
    const verified = verifyMailgunSignature(parsed.value, signingKey, { maxAgeSeconds });
    if (!verified.ok) return refused(verified);
    const event = normalizeMailgunEvent(req.body, deps.eventWindow());
    if (!event.ok) return refused(event);
    const token = parsed.value.token;
    const tokenKey = deps.keys.webhookToken('mailgun', token);
    // Twice the window: a timestamp up to maxAge in the future stays acceptable that long.
    // The token reads `applying` until its event is applied: an api killed in between left
    // it so, and Mailgun's retry of this very request is let through (applying an event
    // twice changes nothing: the feedback and the signal counts each dedupe by event).
    const ttl = 2 * maxAgeSeconds;
    const fresh = await deps.redis.set(tokenKey, APPLYING, 'EX', ttl, 'NX');
    if (fresh === null && (await deps.redis.get(tokenKey)) !== APPLYING) {
      deps.logger.info(
        { event: 'webhook_refused', provider: 'mailgun', code: 'replayed' },
        'Mailgun token seen before',
      );
      return refuse(reply, 406, 'replayed', 'this signed request was received before');
    }
    try {
      const result = await applyAll(deps, event.value ? [event.value] : []);
      await deps.redis.set(tokenKey, 'applied', 'KEEPTTL', 'XX');
      deps.logger.info({ event: 'webhook_applied', provider: 'mailgun', ...result }, 'Mailgun event applied');
      return result;
    } catch (err) {
      // Not applied: let Mailgun's retry of this very request through.
      await deps.redis.del(tokenKey).catch(() => undefined);
      throw err;
    }
  });
}
