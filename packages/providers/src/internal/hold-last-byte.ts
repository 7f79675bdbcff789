import type { ClientRequest } from 'node:http';

/** What holds a request's last bytes: its gate, and the mark that they went out. */
export interface Gate {
  /** Resolves when the final bytes may go, rejects when they must not (asked once or more: same answer). */
  gate(): Promise<void>;
  /** The final bytes are handed over. */
  markSubmitted(): void;
}

/** The error a request is destroyed with when its gate refused: nothing complete went out. */
export class NotSubmittedError extends Error {
  /** Reads as "no answer" to every adapter's classifier (transient, not submitted). */
  readonly code = 'ESUBMITGATE';

  constructor(cause: unknown) {
    super(
      `not sent: the gate before the final bytes refused (${cause instanceof Error ? cause.message : String(cause)})`,
      {
        cause,
      },
    );
    this.name = 'NotSubmittedError';
  }
}

type WriteCallback = (error?: Error | null) => void;

/** A chunk as `write`/`end` take it, as bytes; `undefined` for what Node itself should refuse. */
function bytesOf(chunk: unknown, encoding: unknown): Buffer | undefined {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (typeof chunk === 'string')
    return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return undefined;
}

/**
 * Holds back the last byte of `req`'s body until `submission`'s gate resolves. Every byte
 * before it goes out as the SDK writes it (`end(body)`, or `write(chunk)…end()` when it
 * pipes a stream); once all of them have been handed to the connected socket the gate runs,
 * and only when it resolves does the last byte (with the terminating chunk, when chunked)
 * follow. A server, told the length or reading chunks, cannot act on a request missing its
 * last byte. When the gate rejects the request is destroyed: the ESP never gets it whole.
 */
export function holdLastByte(req: ClientRequest, submission: Gate): void {
  const write = req.write.bind(req) as (chunk: Buffer, callback?: WriteCallback) => boolean;
  const end = req.end.bind(req) as (chunk?: Buffer | WriteCallback, callback?: () => void) => ClientRequest;
  let held: Buffer | undefined;
  // Write callbacks come in order: the last one's means everything so far reached the socket.
  let flushed: Promise<void> = Promise.resolve();
  const pass = (chunk: Buffer, callback?: WriteCallback): boolean => {
    let ok = true;
    flushed = new Promise<void>((resolve) => {
      ok = write(chunk, (error) => {
        resolve();
        callback?.(error);
      });
    });
    return ok;
  };
  /** Sends the byte held so far and all of `bytes` but its last, which is held instead. */
  const push = (bytes: Buffer, callback?: WriteCallback): boolean => {
    let ok = held === undefined ? true : pass(held);
    held = bytes.subarray(bytes.length - 1);
    if (bytes.length > 1) ok = pass(bytes.subarray(0, -1), callback);
    else if (callback) void flushed.then(() => callback());
    return ok;
  };
  const closed = new Promise<void>((resolve) => req.once('close', resolve));

  async function finish(callback: (() => void) | undefined): Promise<void> {
    await Promise.race([flushed, closed]);
    if (req.destroyed) return;
    try {
      await submission.gate();
    } catch (error) {
      req.destroy(new NotSubmittedError(error));
      return;
    }
    if (req.destroyed) return;
    submission.markSubmitted();
    if (held === undefined) end(callback);
    else end(held, callback);
  }

  Object.defineProperty(req, 'write', {
    configurable: true,
    value(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
      const cb = (typeof encoding === 'function' ? encoding : callback) as WriteCallback | undefined;
      const bytes = bytesOf(chunk, encoding);
      if (bytes === undefined) return write(chunk as Buffer, cb);
      if (bytes.length === 0) {
        if (cb) process.nextTick(cb);
        return true;
      }
      return push(bytes, cb);
    },
  });
  Object.defineProperty(req, 'end', {
    configurable: true,
    value(chunk?: unknown, encoding?: unknown, callback?: unknown): ClientRequest {
      const cb = [chunk, encoding, callback].find((a) => typeof a === 'function') as (() => void) | undefined;
      const body = typeof chunk === 'function' || chunk === undefined || chunk === null ? undefined : chunk;
      if (body !== undefined) {
        const bytes = bytesOf(body, encoding);
        if (bytes === undefined) return end(body as Buffer, cb);
        if (bytes.length > 0) push(bytes);
      }
      finish(cb).catch((error: unknown) => req.destroy(error instanceof Error ? error : new Error(String(error))));
      return req;
    },
  });
}
