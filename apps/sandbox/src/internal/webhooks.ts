import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { AcceptedMessage, Recorder, WebhookReport } from '../recorder.js';
import type { Scenario } from '../scenario.js';
import { domainOf } from './address.js';
import type { WebhookSigners } from './webhook-keys.js';
import { mailgunEvent, sendgridEvents, sesNotification, type Report, type SignedRequest } from './webhook-payloads.js';

/** How long one report may take to post: the receiver's problem must not become ours. */
const POST_TIMEOUT_MS = 5_000;

/** Options of {@link createReporter}. */
export interface ReporterOptions {
  logger: Logger;
  recorder: Recorder;
  scenario: () => Scenario;
  signers: WebhookSigners;
  /** The https `SigningCertURL` of SNS notifications; unset when there is no SNS identity. */
  snsCertUrl: () => string | undefined;
  /** The sandbox's base URL, for SNS's `UnsubscribeURL`. */
  baseUrl: () => string;
}

/** Reports what receivers did with accepted messages, by the webhook of the ESP that took them. */
export interface Reporter {
  /** Decides this message's fate per recipient and schedules its reports. */
  accepted(message: AcceptedMessage, bounce?: boolean): void;
  /** Cancels scheduled reports and aborts those being posted. */
  close(): Promise<void>;
}

/**
 * A number in [0, 1) fixed by the message and recipient: the same message always meets the
 * same fate, so a test run repeats. The salt keeps the bounce and complaint draws independent.
 */
function draw(salt: string, message: AcceptedMessage, recipient: string): number {
  const id = message.sluiceId ?? message.messageId ?? message.providerMessageId;
  return createHash('sha256').update(`${salt}\0${id}\0${recipient.toLowerCase()}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** Creates the reporter; nothing is posted for an ESP the scenario gives no URL. */
export function createReporter(options: ReporterOptions): Reporter {
  const { logger, recorder, signers } = options;
  const timers = new Set<NodeJS.Timeout>();
  const posting = new Set<Promise<void>>();
  const abort = new AbortController();

  function build(report: Report): { url: string; request: SignedRequest } | undefined {
    const targets = options.scenario().webhooks;
    switch (report.message.protocol) {
      case 'ses': {
        if (targets.ses === undefined) return undefined;
        const sns = signers.sns;
        const certUrl = options.snsCertUrl();
        if (sns === undefined || certUrl === undefined) {
          throw new Error('no SNS signing identity (is the openssl CLI installed?)');
        }
        const request = sesNotification(report, {
          privateKey: sns.privateKey,
          certUrl,
          topicArn: targets.ses.topicArn,
          unsubscribeBase: `${options.baseUrl()}/_sandbox/sns/unsubscribe`,
        });
        return { url: targets.ses.url, request };
      }
      case 'sendgrid':
        return (
          targets.sendgrid && {
            url: targets.sendgrid.url,
            request: sendgridEvents(report, signers.sendgrid.privateKey),
          }
        );
      case 'mailgun':
        return (
          targets.mailgun && { url: targets.mailgun.url, request: mailgunEvent(report, signers.mailgunSigningKey) }
        );
      default:
        // SMTP has no webhooks: what happens after `250` is not the sender's to hear.
        return undefined;
    }
  }

  /**
   * Posts one report; a post not answered 2xx is posted again, the same signed request, after
   * `webhooks.redeliverMs` (when set), as the ESPs retry: SNS and SendGrid any failure,
   * Mailgun any but a 406 and never a `delivered` event (Mailgun's documented schedule).
   */
  async function post(report: Report, kept: WebhookReport, built?: ReturnType<typeof build>): Promise<void> {
    const { kind, recipient, message } = report;
    const where = { kind, recipient, protocol: message.protocol, sluiceId: message.sluiceId };
    const redelivery = kept.posts > 0;
    let status: number | undefined;
    let target: ReturnType<typeof build>;
    try {
      target = built ?? build(report);
      if (target === undefined) return;
      kept.posts += 1;
      const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(POST_TIMEOUT_MS)]);
      const res = await fetch(target.url, {
        method: 'POST',
        headers: target.request.headers,
        body: target.request.body,
        signal,
      });
      status = res.status;
      const answer = await res.text();
      if (res.ok) {
        kept.answered = true;
        recorder.countWebhook('sent', redelivery);
        logger.debug({ ...where, status: res.status }, 'webhook reported');
        return;
      }
      recorder.countWebhook('failed', redelivery);
      logger.warn({ ...where, status: res.status, answer: answer.slice(0, 500) }, 'webhook refused');
    } catch (error) {
      if (abort.signal.aborted) return;
      recorder.countWebhook('failed', redelivery);
      logger.warn({ ...where, err: error }, 'webhook not reported');
      if (target === undefined) return;
    }
    const { redeliverMs, redeliveries } = options.scenario().webhooks;
    const mailgunGivesUp = message.protocol === 'mailgun' && (status === 406 || kind === 'delivery');
    if (redeliverMs === undefined || mailgunGivesUp || kept.posts > redeliveries) {
      kept.abandoned = true;
      return;
    }
    schedule(report, kept, redeliverMs, target);
  }

  function schedule(report: Report, kept: WebhookReport, delayMs: number, built?: ReturnType<typeof build>): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      const p = post(built ? report : { ...report, at: Date.now() }, kept, built).finally(() => posting.delete(p));
      posting.add(p);
    }, delayMs);
    timers.add(timer);
  }

  return {
    accepted(message, bounce = false) {
      if (abort.signal.aborted || message.protocol === 'smtp') return;
      const { webhooks, domains, default: fallback } = options.scenario();
      for (const recipient of message.to) {
        const behaviour = domains[domainOf(recipient)] ?? fallback;
        let kind: Report['kind'] | undefined;
        if (bounce || draw('bounce', message, recipient) < behaviour.bounceRate) kind = 'bounce';
        else if (draw('complaint', message, recipient) < behaviour.complaintRate) kind = 'complaint';
        else if (webhooks.reportDeliveries) kind = 'delivery';
        if (kind === undefined) continue;
        const kept = recorder.report({
          kind,
          protocol: message.protocol,
          sluiceId: message.sluiceId,
          recipient,
          posts: 0,
          answered: false,
          abandoned: false,
        });
        schedule({ kind, message, recipient, at: message.arrivedAt }, kept, webhooks.reportDelayMs);
      }
    },
    async close() {
      abort.abort();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...posting]);
    },
  };
}
