import { request } from 'node:https';

/** Options of {@link httpsGet}. */
export interface HttpsGetOptions {
  /** The whole request, connect to last byte. */
  timeoutMs: number;
  /** A longer body is refused (a certificate is about 2 KiB). */
  maxBytes: number;
  /** Extra trusted CA (PEM), for a local server in tests; the system CAs otherwise. */
  ca?: string | undefined;
}

/**
 * GETs an https URL and resolves with its body as text; rejects on any other protocol, a
 * non-2xx status (redirects are not followed), a body over `maxBytes`, or the timeout.
 * Used only for URLs that passed the SNS host checks.
 */
export function httpsGet(url: string, options: HttpsGetOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    if (target.protocol !== 'https:') {
      reject(new Error('only https URLs are fetched'));
      return;
    }
    const req = request(
      target,
      { method: 'GET', timeout: options.timeoutMs, ...(options.ca ? { ca: options.ca } : {}) },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          res.resume();
          reject(new Error(`GET ${target.host} answered ${status}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            req.destroy(new Error(`GET ${target.host}: body over ${options.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', reject);
      },
    );
    // `timeout` is idle time; the deadline bounds the whole exchange.
    const deadline = setTimeout(() => req.destroy(new Error(`GET ${target.host} timed out`)), options.timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new Error(`GET ${target.host} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
