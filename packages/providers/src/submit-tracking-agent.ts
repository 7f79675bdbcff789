import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  Agent as HttpAgent,
  type AgentOptions,
  type ClientRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

/**
 * One send's submission: whether its request (HTTP body, SMTP data after DATA) has been
 * written out in full, and the answer's headers where the SDK hides them.
 */
export class Submission {
  #submitted = false;
  #headers: IncomingHttpHeaders | undefined;
  readonly #onSubmitted: (() => void) | undefined;

  constructor(onSubmitted?: () => void) {
    this.#onSubmitted = onSubmitted;
  }

  /** From now on the ESP may have the message even if no answer comes back. */
  get submitted(): boolean {
    return this.#submitted;
  }

  /** Response headers (lower-case names), once an HTTP answer came. */
  get headers(): Readonly<Record<string, string | undefined>> | undefined {
    if (this.#headers === undefined) return undefined;
    const out: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(this.#headers))
      out[name] = Array.isArray(value) ? value.join(', ') : value;
    return out;
  }

  /** Marks the request written out in full; calls `onSubmitted` the first time only. */
  markSubmitted(): void {
    if (this.#submitted) return;
    this.#submitted = true;
    this.#onSubmitted?.();
  }

  /** @internal */
  answered(headers: IncomingHttpHeaders): void {
    this.#headers = headers;
  }
}

type AddRequest = (this: HttpAgent, req: ClientRequest, ...rest: unknown[]) => void;

/** Node publishes every `http.request` here (stable since Node 19.2 / 18.15). */
const REQUEST_START = 'http.client.request.start';

/** The HTTP request header that names the send a request carries (ESPs ignore it). */
export const SEND_HEADER = 'x-sluice-send';

/**
 * Tells when the HTTP request of a send has been written out in full: from then on the
 * ESP may act on it even if we never see the answer.
 *
 * For SDKs that take an agent (SES, SendGrid) a send is recognised by a request header
 * it names itself with ({@link SEND_HEADER}, registered with {@link watch}). For SDKs that
 * take none (mailgun.js) the send runs inside {@link run} and its request is recognised by
 * that async context. The header costs nothing; an async context costs every promise of
 * the process on Node 20 (async hooks), so only adapters that need it use it.
 */
export class SubmitTracker {
  readonly #byHeader = new Map<string, Submission>();
  readonly #current = new AsyncLocalStorage<Submission>();

  /** Reports the request carrying `SEND_HEADER: key` to `submission`. Returns the cancel function. */
  watch(key: string, submission: Submission): () => void {
    this.#byHeader.set(key, submission);
    return () => {
      if (this.#byHeader.get(key) === submission) this.#byHeader.delete(key);
    };
  }

  /** Runs `send` so that the HTTP request it makes reports to `submission` (with {@link listen}). */
  run<T>(submission: Submission, send: () => Promise<T>): Promise<T> {
    return this.#current.run(submission, send);
  }

  /**
   * An http and https agent that report submissions, for SDKs that take an agent. Node's
   * agents get every request through `addRequest` (not in @types/node, stable since
   * Node 0.x), where the request's headers are final.
   */
  agents(options: AgentOptions): { httpAgent: HttpAgent; httpsAgent: HttpsAgent } {
    const wrap = <A extends HttpAgent>(agent: A): A => {
      const proto = Object.getPrototypeOf(agent) as { addRequest: AddRequest };
      const original = proto.addRequest;
      const track = (req: ClientRequest): void => {
        const key = req.getHeader(SEND_HEADER);
        const submission = typeof key === 'string' ? this.#byHeader.get(key) : undefined;
        if (submission) this.#track(req, submission);
      };
      Object.defineProperty(agent, 'addRequest', {
        value(this: HttpAgent, req: ClientRequest, ...rest: unknown[]) {
          track(req);
          original.call(this, req, ...rest);
        },
      });
      return agent;
    };
    return { httpAgent: wrap(new HttpAgent(options)), httpsAgent: wrap(new HttpsAgent(options)) };
  }

  /**
   * Listens to Node's `http.client.request.start` channel, for SDKs that take no agent
   * (mailgun.js). Only requests made inside {@link run} are tracked. Returns the function
   * that stops listening.
   */
  listen(): () => void {
    const onStart = (message: unknown): void => {
      const req = (message as { request?: ClientRequest }).request;
      const submission = this.#current.getStore();
      if (req && submission) this.#track(req, submission);
    };
    subscribe(REQUEST_START, onStart);
    return () => {
      unsubscribe(REQUEST_START, onStart);
    };
  }

  #track(req: ClientRequest, submission: Submission): void {
    // `finish`: the last byte has been handed to the socket. A request whose connection
    // was refused never gets there.
    req.once('finish', () => submission.markSubmitted());
    req.once('response', (res: IncomingMessage) => submission.answered(res.headers));
  }
}
