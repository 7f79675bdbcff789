import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** SES v2 takes messages up to 40 MB; a little more leaves room for JSON and base64. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Reads a whole request body; bytes past `limit` are drained, not kept. */
export async function readBody(
  req: IncomingMessage,
  limit = MAX_BODY_BYTES,
): Promise<{ body: Buffer; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  return { body: Buffer.concat(chunks), tooLarge: size > limit };
}

/** Answers with `text` (may be empty). A client that went away meanwhile is not an error. */
export function sendText(
  res: ServerResponse,
  status: number,
  contentType: string | undefined,
  text: string,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, {
    ...(contentType === undefined ? {} : { 'content-type': contentType }),
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/**
 * Answers with JSON in SES's manner. Every answer carries `x-amzn-requestid`, as the SDK copies
 * it into `$metadata.requestId`.
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendText(res, status, 'application/json', JSON.stringify(body), { 'x-amzn-requestid': randomUUID(), ...headers });
}

/** An SES error: the SDK takes the error name from `x-amzn-ErrorType` and the text from `message`. */
export function sendSesError(res: ServerResponse, status: number, errorType: string, message: string): void {
  sendJson(res, status, { message }, { 'x-amzn-ErrorType': errorType });
}

/** Parses a JSON body; an empty body counts as `{}`. */
export function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  if (body.length === 0) return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) as unknown };
  } catch {
    return { ok: false };
  }
}

/** The credentials of `Authorization: Basic …`, if that is what the request carries. */
export function basicAuth(req: IncomingMessage): { user: string; password: string } | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  if (match?.[1] === undefined) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
