import { Agent, fetch } from 'undici';

/** Options of {@link httpsGet}. */
export interface HttpsGetOptions {
  /** The whole request, connect to last byte. */
  timeoutMs: number;
  /** A longer body is refused (a certificate is about 2 KiB). */
  maxBytes: number;
  /** Extra trusted CA (PEM), for a local server in tests; the system CAs otherwise. */
  ca?: string | undefined;
}

/** What we refused (status, size), as opposed to what the request failed on. */
class RefusedError extends Error {}

/**
 * GETs an https URL (undici's `fetch`) and resolves with its body as text; rejects on any other
 * protocol, a redirect (never followed: the URL passed the SNS host checks, where it points
 * need not), a non-2xx status, a body over `maxBytes`, or the timeout.
 * Used only for URLs that passed the SNS host checks.
 */
export async function httpsGet(url: string, options: HttpsGetOptions): Promise<string> {
  const target = new URL(url);
  if (target.protocol !== 'https:') throw new Error('only https URLs are fetched');
  const dispatcher = options.ca ? new Agent({ connect: { ca: options.ca } }) : undefined;
  // One signal for the whole exchange, body included: a server that trickles is cut off too.
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    const res = await fetch(target, { redirect: 'error', signal, ...(dispatcher ? { dispatcher } : {}) });
    if (!res.ok) {
      await res.body?.cancel();
      throw new RefusedError(`GET ${target.host} answered ${res.status}`);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (res.body) {
      // A fetch body is a stream of bytes (undici's types leave its chunks untyped).
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        size += chunk.byteLength;
        // Leaving the loop cancels the stream (and so the connection).
        if (size > options.maxBytes) throw new RefusedError(`GET ${target.host}: body over ${options.maxBytes} bytes`);
        chunks.push(chunk);
      }
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch (error) {
    if (signal.aborted) throw new Error(`GET ${target.host} timed out`, { cause: error });
    if (error instanceof RefusedError) throw error;
    // undici says only "fetch failed"; why (a redirect, TLS, refused) is in its cause.
    const why = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new Error(`GET ${target.host} failed: ${why}`, { cause: error });
  } finally {
    await dispatcher?.close();
  }
}
