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

/**
 * The error a request is destroyed with when its connection was closed before the final
 * bytes were written: the server closed (its FIN or reset read) or the socket failed, so
 * nothing complete went out.
 */
class ConnectionClosedError extends Error {
  /** Reads as "no answer" to every adapter's classifier (transient, not submitted). */
  readonly code = 'ECONNCLOSED';

  constructor(reused: boolean) {
    super(
      `not sent: the connection was closed before the request's last byte${reused ? ' (a reused keep-alive connection)' : ''}`,
    );
    this.name = 'ConnectionClosedError';
  }
}

type WriteCallback = (error?: Error | null) => void;

/**
 * Whether `req`'s connection can still carry its last byte. Node tells a client that the
 * server closed only by events: its FIN as the socket's 'end' (`readableEnded`; the http
 * client then reports "socket hang up"), its reset as an 'error' (`read ECONNRESET`, or
 * `write EPIPE` on our next write) that destroys the socket. None says whether the server
 * had read the request; what we know is whether we saw the close before we wrote the last
 * byte.
 */
function connectionOpen(req: ClientRequest): boolean {
  const socket = req.socket;
  if (req.destroyed) return false;
  // No connection yet (a body-less request ended at once): nothing of it went anywhere.
  return socket === null || (!socket.destroyed && socket.writable && !socket.readableEnded);
}

/**
 * Resolves once the event loop has polled for I/O at least once more: whatever reached the
 * socket before now (a FIN or reset already in the kernel) has then been read. One
 * `setImmediate` from within the poll phase runs before the next poll; the second runs after it.
 */
function afterPendingIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

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
 * last byte. When the gate rejects, or the connection was closed before the last byte
 * (seen before it is written), the request is destroyed: the ESP never gets it whole.
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

  /** Destroys `req` when its connection is lost (unless it already is); true when it was. */
  const lost = (): boolean => {
    if (connectionOpen(req)) return false;
    if (!req.destroyed) req.destroy(new ConnectionClosedError(req.reusedSocket));
    return true;
  };

  async function finish(callback: (() => void) | undefined): Promise<void> {
    await Promise.race([flushed, closed]);
    if (lost()) return;
    try {
      await submission.gate();
    } catch (error) {
      req.destroy(new NotSubmittedError(error));
      return;
    }
    // A server closing an idle keep-alive connection as our request goes out: its FIN or
    // reset may be here already, unread. Read it first; only a connection still open when
    // the last byte is written makes the request submitted (and a lost answer ambiguous).
    await afterPendingIo();
    if (lost()) return;
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
