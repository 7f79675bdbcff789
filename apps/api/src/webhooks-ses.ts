import type { KeyObject } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { SNS_HOST_PATTERN, normalizeSesEvent, verifySnsMessage } from '@sluice/events';
import { BODY_LIMIT, applyAll, type WebhookDeps } from './internal/deps.js';
import { STATUS_OF, refuse } from './internal/reply.js';

/** Options of {@link registerSesWebhook}. */
export interface SesWebhookOptions extends WebhookDeps {
  fetchCertificate: (url: string) => Promise<string>;
  confirmSubscription: (subscribeUrl: string) => Promise<void>;
  /**
   * SNS messages older than this are refused; newer retries are deduplicated by the
   * feedback's event memory, which must last at least as long.
   */
  maxAgeSeconds: number;
}

/**
 * `POST /webhooks/ses`: SES events through SNS. SNS posts JSON as `text/plain`, so the body
 * is read raw. Every message is verified (certificate URL, topic, subscribe URL, signature)
 * before anything else happens; a subscription is confirmed only then, since GETting an
 * unchecked `SubscribeURL` would let anyone make us fetch any URL.
 */
export async function registerSesWebhook(app: FastifyInstance, deps: SesWebhookOptions): Promise<void> {
  const { topicArns, certHostPattern } = deps.config.ses;
  const certHost = certHostPattern === undefined ? SNS_HOST_PATTERN : new RegExp(certHostPattern);
  const cache = new Map<string, Promise<KeyObject>>();

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) => done(null, body));

  app.post('/webhooks/ses', { bodyLimit: BODY_LIMIT }, async (req, reply) => {
    if (topicArns.length === 0) {
      return refuse(reply, 503, 'not_configured', 'no SNS topic is accepted: set api.webhooks.ses.topicArns');
    }
    const verified = await verifySnsMessage(typeof req.body === 'string' ? req.body : '', {
      fetchCertificate: deps.fetchCertificate,
      topicArns,
      certHost,
      cache,
      maxAgeSeconds: deps.maxAgeSeconds,
    });
    if (!verified.ok) {
      deps.logger.info({ event: 'webhook_refused', provider: 'ses', code: verified.code }, verified.message);
      return refuse(reply, STATUS_OF[verified.code] ?? 400, verified.code, verified.message);
    }
    const e = verified.value;
    const header = req.headers['x-amz-sns-message-type'];
    if (header !== undefined && header !== e.Type) {
      return refuse(reply, 400, 'malformed', 'x-amz-sns-message-type does not match the message Type');
    }
    if (e.Type === 'SubscriptionConfirmation') {
      try {
        await deps.confirmSubscription(e.SubscribeURL!);
      } catch (err) {
        deps.logger.error(
          { event: 'sns_confirm_failed', topic: e.TopicArn, err: (err as Error).message },
          'SNS subscription not confirmed',
        );
        return refuse(reply, 502, 'confirm_failed', 'the subscription could not be confirmed; SNS may resend it');
      }
      deps.logger.info({ event: 'sns_subscribed', topic: e.TopicArn }, 'SNS subscription confirmed');
      return { confirmed: true };
    }
    if (e.Type === 'UnsubscribeConfirmation') {
      deps.logger.info({ event: 'sns_unsubscribed', topic: e.TopicArn }, 'SNS subscription ended');
      return { events: 0 };
    }
    // A signed message that is not an SES event (a test publish) is taken and ignored:
    // refusing it would only make SNS retry it. An SES event Sluice acts on but cannot use
    // (no time, a recipient without an address) is refused, naming the field.
    const events = normalizeSesEvent(e.Message, e.MessageId, deps.eventWindow());
    if (!events.ok) {
      deps.logger.info({ event: 'webhook_refused', provider: 'ses', code: events.code }, events.message);
      return refuse(reply, STATUS_OF[events.code] ?? 400, events.code, events.message, events.field);
    }
    const result = await applyAll(deps, events.value);
    deps.logger.info({ event: 'webhook_applied', provider: 'ses', ...result }, 'SES events applied');
    return result;
  });
}
