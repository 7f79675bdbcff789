import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AcceptedMessage } from '../recorder.js';
import { domainOf } from './address.js';
import type { Arrival, SandboxContext } from './context.js';
import { parseJson, sendJson, sendSesError } from './http.js';
import { carryOut } from './outcome.js';
import { parseSendEmail } from './send-email.js';

// Real SES appends the coral namespace; the SDK cuts at ':' so both forms decode.
const THROTTLED = 'TooManyRequestsException:http://internal.amazon.com/coral/com.amazonaws.sesv2/';
const DAY_MS = 24 * 60 * 60 * 1000;
// AWS's common InternalFailure text; the SDK treats a 500 as transient.
const INTERNAL_FAILURE = 'The request processing has failed because of an unknown error, exception or failure.';

/** Shaped like a real SES v2 id (`0100` + time + UUID + `-000000`), unique per send. */
export function sesMessageId(now: number): string {
  return `0100${now.toString(16).padStart(12, '0')}-${randomUUID()}-000000`;
}

/** The access key in `Authorization: AWS4-HMAC-SHA256 Credential=<key>/<date>/…`, if any. */
function credentialKey(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  return auth === undefined ? undefined : /Credential=([^/,\s]+)\//.exec(auth)?.[1];
}

/**
 * Answers 403 and returns false when a key (or a session token) is expected and the request
 * names another. The signature itself is not checked: proving the credentials are wired
 * through is enough.
 */
export function checkCredential(ctx: SandboxContext, req: IncomingMessage, res: ServerResponse): boolean {
  const keyOk = ctx.accessKeyId === undefined || credentialKey(req) === ctx.accessKeyId;
  const tokenOk = ctx.sessionToken === undefined || req.headers['x-amz-security-token'] === ctx.sessionToken;
  if (keyOk && tokenOk) return true;
  sendSesError(res, 403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
  return false;
}

/** `POST /v2/email/outbound-emails`: decide on arrival, record, wait the latency, answer. */
export async function sendEmail(ctx: SandboxContext, arrival: Arrival, res: ServerResponse): Promise<void> {
  if (arrival.tooLarge) {
    sendSesError(res, 400, 'BadRequestException', 'Message length is more than 40 MB.');
    return;
  }
  const json = parseJson(arrival.body);
  if (!json.ok) {
    sendSesError(res, 400, 'BadRequestException', 'Request body is not valid JSON.');
    return;
  }
  const parsed = parseSendEmail(json.value);
  if (!parsed.ok) {
    sendSesError(res, 400, 'BadRequestException', parsed.message);
    return;
  }
  const request = parsed.request;
  const domain = domainOf(request.to[0] ?? '');
  // The account's rolling 24-hour quota, checked before anything else, as SES does. The
  // v2 wire shape of this refusal is undocumented; its text is what clients key on.
  const { max24HourSend } = ctx.scenario().account;
  if (max24HourSend >= 0 && ctx.recorder.acceptedSince(arrival.arrivedAt - DAY_MS, 'ses') >= max24HourSend) {
    ctx.recorder.count(domain, 'throttled');
    sendSesError(res, 400, 'LimitExceededException', 'Daily message quota exceeded.');
    return;
  }
  const decision = ctx.policy().decide(domain, request.recipients, arrival.arrivedMono);
  const id = sesMessageId(arrival.arrivedAt);
  const message: AcceptedMessage = {
    protocol: 'ses',
    providerMessageId: id,
    messageId: request.messageId,
    sluiceId: request.tags.sluice_id,
    from: request.from,
    to: request.to,
    subject: request.subject,
    domain,
    arrivedAt: arrival.arrivedAt,
    tags: request.tags,
  };
  await carryOut(ctx, res, domain, decision, message, {
    bounce: (address) => sendSesError(res, 400, 'MessageRejected', `Email address rejected: ${address} (hard bounce)`),
    fail: () => sendSesError(res, 500, 'InternalFailure', INTERNAL_FAILURE),
    throttle: () => sendSesError(res, 429, THROTTLED, 'Maximum sending rate exceeded.'),
    accept: () => sendJson(res, 200, { MessageId: id }),
  });
}

/** `GET /v2/email/account`: the scenario's quota, and what was accepted in the last 24 h. */
export function getAccount(ctx: SandboxContext, res: ServerResponse): void {
  const { account } = ctx.scenario();
  sendJson(res, 200, {
    SendQuota: {
      Max24HourSend: account.max24HourSend,
      MaxSendRate: account.maxSendRate,
      SentLast24Hours: ctx.recorder.acceptedSince(Date.now() - DAY_MS, 'ses'),
    },
    ProductionAccessEnabled: true,
    SendingEnabled: account.sendingEnabled,
    EnforcementStatus: 'HEALTHY',
    DedicatedIpAutoWarmupEnabled: false,
    Details: { MailType: 'TRANSACTIONAL' },
  });
}
