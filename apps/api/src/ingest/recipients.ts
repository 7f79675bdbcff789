import { StringDecoder } from 'node:string_decoder';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SluiceError, type RecipientInput } from '@sluice/core';
import type { SluiceClient } from '@sluice/client';
import type { InjectProgress, InjectResult } from '@sluice/store';
import { sendError } from './auth.js';

/** The content types a recipients body may be sent as: one JSON object a line. */
export const NDJSON_TYPES = ['application/x-ndjson', 'application/jsonl'] as const;
/** The longest line of a recipients body: a recipient and its data. */
export const MAX_LINE_BYTES = 1024 * 1024;
/** How long a request waits for room before it is answered 429, unless `waitMs` says. */
const DEFAULT_WAIT_MS = 5_000;
const MAX_WAIT_MS = 30_000;

/** What the recipients route needs. */
export interface RecipientRoutesDeps {
  client: SluiceClient;
  /** The campaign's id if it is the key's tenant's, else `unknown_campaign`. */
  own(req: FastifyRequest<{ Params: { id: string } }>): Promise<string>;
  /** Refuses when the key's tenant may not send now, or Redis is nearly full. */
  maySend(req: FastifyRequest): Promise<void>;
}

type Query = { from?: string; waitMs?: string; invalid?: string; chunkSize?: string };

/** A query value as an integer within bounds, or `invalid_argument` naming it. */
function integerOf(value: string | undefined, name: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n > max) {
    throw new SluiceError('invalid_argument', `${name}: must be an integer from 0 to ${max}`, { path: name });
  }
  return n;
}

/**
 * The body's lines as recipients, read as they arrive (the request's own backpressure: nothing
 * is read while the injection waits). Empty lines are passed over and take no position; a line
 * that is not JSON, or longer than {@link MAX_LINE_BYTES}, is an `invalid_recipient` naming its
 * position, the recipients before it written.
 */
export async function* ndjsonRecipients(
  body: AsyncIterable<Buffer | string>,
  from: number,
): AsyncGenerator<RecipientInput> {
  let position = from;
  let rest = '';
  // Each line as JSON: its fields are checked by the injection, which names a bad one.
  const parse = (line: string): RecipientInput => {
    try {
      return JSON.parse(line) as RecipientInput;
    } catch {
      throw new SluiceError('invalid_recipient', `recipients.${position}: not a JSON object (one recipient a line)`, {
        path: `recipients.${position}`,
      });
    }
  };
  const tooLong = () =>
    new SluiceError('invalid_recipient', `recipients.${position}: a line longer than ${MAX_LINE_BYTES} bytes`, {
      path: `recipients.${position}`,
    });
  // A character split across two chunks is decoded whole; the lines of a chunk are cut by index,
  // without copying what is left of it once per line.
  const utf8 = new StringDecoder('utf8');
  for await (const chunk of body) {
    rest += typeof chunk === 'string' ? chunk : utf8.write(chunk);
    let from = 0;
    for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n', from)) {
      const line = rest.slice(from, nl).trim();
      from = nl + 1;
      if (line.length > MAX_LINE_BYTES) throw tooLong();
      if (line === '') continue;
      yield parse(line);
      position++;
    }
    rest = rest.slice(from);
    if (rest.length > MAX_LINE_BYTES) throw tooLong();
  }
  rest += utf8.end();
  if (rest.trim() !== '') yield parse(rest.trim());
}

/** What a wait past `waitMs` is answered with: 429, when to come back, and where to resume. */
function waitingError(p: InjectProgress, campaignId: string): SluiceError {
  const w = p.window;
  const why =
    p.waiting === 'launch'
      ? 'its launch has not opened the next recipients yet'
      : p.waiting === 'outcomes'
        ? 'the outcome stream is past its bound (a consumer group is behind)'
        : `its window is full (${w.waiting} waiting for admission of ${w.ready}, ${w.pending} not final of ${w.max})`;
  // Half the ready part of the window drains in ready / 2 / rate seconds at the admitted rate.
  const seconds = w.rate > 0 ? Math.min(30, Math.max(1, Math.ceil(w.ready / 2 / w.rate))) : 5;
  return new SluiceError(
    'injection_waiting',
    `campaign ${campaignId} takes no more recipients now: ${why}; resume from position ${p.cursor.position}`,
    { path: 'recipients', retryAfterMs: seconds * 1000 },
  );
}

/**
 * `POST /v1/campaigns/{id}/recipients`: the campaign's recipients as an NDJSON body, each line
 * `{ to, data?, key?, cursor? }` as `campaigns.inject` takes it, written in chunks with the
 * cursor. Answered 200 once every line is queued. While the campaign's window stays full past
 * `waitMs`, answered 429 `injection_waiting` with `Retry-After` and the cursor: the rest is sent
 * again from `?from=<cursor.position>` (lines behind the cursor are skipped, so sending the whole
 * body again from 0 adds none twice).
 */
export function registerRecipientRoutes(app: FastifyInstance, deps: RecipientRoutesDeps): void {
  // The body stays a stream: read line by line as the injection takes them.
  for (const type of NDJSON_TYPES) {
    app.addContentTypeParser(type, (_req, payload, done) => done(null, payload));
  }
  app.post<{ Params: { id: string }; Querystring: Query }>(
    '/v1/campaigns/:id/recipients',
    { config: { scope: 'campaigns:write', streamed: true } },
    async (req, reply) => {
      let progress: InjectProgress | undefined;
      // What the injection was waiting for when its wait ran out (it may write a chunk after).
      let waited: InjectProgress | undefined;
      try {
        const id = await deps.own(req);
        const type = String(req.headers['content-type'] ?? '')
          .split(';')[0]!
          .trim();
        if (!(NDJSON_TYPES as readonly string[]).includes(type)) {
          throw new SluiceError('invalid_argument', `content-type: must be ${NDJSON_TYPES.join(' or ')}`, {
            path: 'content-type',
          });
        }
        const from = integerOf(req.query.from, 'from', 0, Number.MAX_SAFE_INTEGER);
        const waitMs = integerOf(req.query.waitMs, 'waitMs', DEFAULT_WAIT_MS, MAX_WAIT_MS);
        const chunkSize = integerOf(req.query.chunkSize, 'chunkSize', 500, 10_000);
        const invalid = req.query.invalid ?? 'stop';
        if (invalid !== 'stop' && invalid !== 'reject') {
          throw new SluiceError('invalid_argument', `invalid: must be 'stop' or 'reject'`, { path: 'invalid' });
        }
        await deps.maySend(req);
        const stop = new AbortController();
        let timer: NodeJS.Timeout | undefined;
        const result = await deps.client.campaigns
          .inject(id, ndjsonRecipients(req.body as AsyncIterable<Buffer>, from), {
            from,
            chunkSize,
            invalid,
            signal: stop.signal,
            onProgress(p) {
              progress = p;
              if (p.waiting === undefined) {
                clearTimeout(timer);
                timer = undefined;
              } else
                timer ??= setTimeout(() => {
                  waited = progress;
                  stop.abort();
                }, waitMs);
            },
          })
          .finally(() => clearTimeout(timer));
        return reply.send(result satisfies InjectResult);
      } catch (err) {
        if (!(err instanceof SluiceError)) throw err;
        const failure =
          err.code === 'aborted' && waited !== undefined
            ? waitingError({ ...waited, cursor: progress!.cursor }, req.params.id)
            : err;
        return answerWithCursor(reply, failure, progress);
      }
    },
  );
}

/** An error answer that also says how far the request got (`cursor`, `accepted`), so it can resume. */
function answerWithCursor(reply: FastifyReply, err: SluiceError, progress: InjectProgress | undefined): FastifyReply {
  if (progress === undefined) return sendError(reply, err);
  const { cursor, accepted, skipped } = progress;
  return sendError(reply, err, { cursor, accepted, skipped });
}
