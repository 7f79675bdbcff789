import { CLASSIFIER_VERSION, classifyReply, type Reply } from '../classify.js';
import { outcomeFrom, type Outcome } from '../provider.js';

/** How a reply goes into the attempt log: status and full text in one string. */
export function formatReply(reply: Reply): string {
  if (reply.status === 0) return `no response: ${reply.text}`;
  if (reply.channel === 'http') return `HTTP ${reply.status} ${reply.text}`;
  // nodemailer's `response` already starts with the code, on every line.
  return reply.text.startsWith(String(reply.status)) ? reply.text : `${reply.status} ${reply.text}`;
}

/** The outcome of an answer that is not an acceptance: always through the rule table. */
export function classified(reply: Reply): Outcome {
  return outcomeFrom(classifyReply(reply), formatReply(reply));
}

/**
 * No answer at all. Once the request had been written out in full the ESP may have the
 * message, so the outcome is `ambiguous` and never a silent second send; before that
 * nothing can have been accepted, and it is classified as a failure without a reply
 * (status 0: transient, safe to retry).
 */
export function unanswered(channel: Reply['channel'], text: string, submitted: boolean): Outcome {
  const reply: Reply = { channel, status: 0, text };
  return submitted ? { kind: 'ambiguous', reply: formatReply(reply), answered: false } : classified(reply);
}

/**
 * Content this ESP cannot send (an ESP template over SMTP, raw MIME to SendGrid): refused
 * before any network call, permanently, as the message itself is at fault.
 */
export function unsupported(reply: string): Outcome {
  return {
    kind: 'rejected',
    family: 'content_rejected',
    answered: true,
    suppress: false,
    rule: 'adapter.unsupported-content',
    version: CLASSIFIER_VERSION,
    reply,
  };
}

/**
 * Hides credentials in any text taken from an SDK error, in case an SDK or a server echoes
 * them (a request dump, a URL with a key). Also catches the Basic-auth form `user:key`.
 */
export function secretFilter(secrets: readonly (string | undefined)[]): (text: string) => string {
  const hidden = secrets.filter((s): s is string => s !== undefined && s.length >= 4);
  const forms = hidden.flatMap((s) => [s, encodeURIComponent(s)]);
  return (text) => {
    let out = text;
    for (const s of forms) out = out.split(s).join('***');
    return out;
  };
}
