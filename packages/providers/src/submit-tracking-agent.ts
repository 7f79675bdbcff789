import { AsyncLocalStorage } from 'node:async_hooks';
import {
  globalAgent as httpGlobalAgent,
  Agent as HttpAgent,
  type AgentOptions,
  type ClientRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { globalAgent as httpsGlobalAgent, Agent as HttpsAgent } from 'node:https';
import { holdLastByte } from './internal/hold-last-byte.js';
import { noteAnswer, retireStale, retireWhenIdle } from './internal/idle-sockets.js';

export { NotSubmittedError } from './internal/hold-last-byte.js';

/**
 * One send's submission: the gate its request's final bytes wait at, whether they went
 * out, and the answer's headers where the SDK hides them.
 */
export class Submission {
  #submitted = false;
  #headers: IncomingHttpHeaders | undefined;
  #gate: Promise<void> | undefined;
  readonly #beforeSubmit: (() => Promise<void>) | undefined;

  constructor(beforeSubmit?: () => Promise<void>) {
    this.#beforeSubmit = beforeSubmit;
  }

  /** The final bytes went out: from now on the ESP may have the message even if no answer comes back. */
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

  /**
   * Runs `beforeSubmit` (once, however often it is asked): resolves when the request's final
   * bytes may go, rejects when they must not.
   */
  gate(): Promise<void> {
    const before = this.#beforeSubmit;
    this.#gate ??= before === undefined ? Promise.resolve() : new Promise<void>((resolve) => resolve(before()));
    return this.#gate;
  }

  /** The final bytes are handed over (after {@link gate} resolved). */
  markSubmitted(): void {
    this.#submitted = true;
  }

  /** @internal */
  answered(headers: IncomingHttpHeaders): void {
    this.#headers = headers;
  }
}

type AddRequest = (this: HttpAgent, req: ClientRequest, ...rest: unknown[]) => void;

/**
 * Has `agent` show `onRequest` every request it is given, before the request's first byte
 * is written. Node's agents get every request through `addRequest` (not in @types/node,
 * stable since Node 0.x), called as the request is made, when its headers are final.
 * Returns the function that stops it.
 */
function interpose(agent: HttpAgent, onRequest: (req: ClientRequest) => void): () => void {
  const own = Object.prototype.hasOwnProperty.call(agent, 'addRequest');
  const original = (agent as unknown as { addRequest: AddRequest }).addRequest;
  Object.defineProperty(agent, 'addRequest', {
    configurable: true,
    writable: true,
    value(this: HttpAgent, req: ClientRequest, ...rest: unknown[]) {
      onRequest(req);
      original.call(this, req, ...rest);
    },
  });
  return () => {
    if (own) Object.defineProperty(agent, 'addRequest', { configurable: true, writable: true, value: original });
    else delete (agent as unknown as { addRequest?: AddRequest }).addRequest;
  };
}

/** Who watches the requests of Node's global agents (installed while any does). */
const globalWatchers = new Set<(req: ClientRequest, agent: HttpAgent) => void>();
let restoreGlobal: (() => void) | undefined;

/** The HTTP request header that names the send a request carries (ESPs ignore it). */
export const SEND_HEADER = 'x-sluice-send';

/**
 * Finds the HTTP request of each send and holds its last byte back until the send's gate
 * (its `submitted` mark) resolves: from then on the ESP may act on it even if we never see
 * the answer, and before it the ESP cannot have it whole.
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

  /** Gates the request carrying `SEND_HEADER: key` by `submission`. Returns the cancel function. */
  watch(key: string, submission: Submission): () => void {
    this.#byHeader.set(key, submission);
    return () => {
      if (this.#byHeader.get(key) === submission) this.#byHeader.delete(key);
    };
  }

  /** Runs `send` so that the HTTP request it makes is gated by `submission` (with {@link listen}). */
  run<T>(submission: Submission, send: () => Promise<T>): Promise<T> {
    return this.#current.run(submission, send);
  }

  /**
   * An http and https agent that gate the requests of watched sends, for SDKs that take an
   * agent. Their idle connections are never reused near the server's idle timeout: retired
   * after `Keep-Alive: timeout=N` less a second, or 4 s idle (`FREE_SOCKET_IDLE_MS`), whichever
   * comes first (see `internal/idle-sockets.ts`).
   */
  agents(options: AgentOptions): { httpAgent: HttpAgent; httpsAgent: HttpsAgent } {
    const httpAgent = new HttpAgent(options);
    const httpsAgent = new HttpsAgent(options);
    for (const agent of [httpAgent, httpsAgent]) {
      retireWhenIdle(agent);
      interpose(agent, (req) => {
        retireStale(agent);
        noteAnswer(req);
        const key = req.getHeader(SEND_HEADER);
        const submission = typeof key === 'string' ? this.#byHeader.get(key) : undefined;
        if (submission) this.#track(req, submission);
      });
    }
    return { httpAgent, httpsAgent };
  }

  /**
   * Gates the requests made inside {@link run} that go through Node's global agents, for
   * SDKs that take no agent (mailgun.js: its axios uses them). Node 20 announces a request
   * on its diagnostics channel only once the request has been ended, too late to hold
   * anything back; the agent sees it as it is made. Requests made outside {@link run} pass
   * untouched. Returns the function that stops.
   */
  listen(): () => void {
    const onRequest = (req: ClientRequest, agent: HttpAgent): void => {
      const submission = this.#current.getStore();
      if (submission === undefined) return;
      // Node's global agents retire idle connections by a timer (after 5 s, the very idle
      // timeout of Node servers, or the server's hint less a second), which a busy event
      // loop runs late. The clock at reuse decides instead, with our own agents' limits.
      retireStale(agent);
      noteAnswer(req);
      this.#track(req, submission);
    };
    if (globalWatchers.size === 0) {
      const notifier =
        (agent: HttpAgent) =>
        (req: ClientRequest): void => {
          for (const watcher of globalWatchers) watcher(req, agent);
        };
      const undo = [
        interpose(httpGlobalAgent, notifier(httpGlobalAgent)),
        interpose(httpsGlobalAgent, notifier(httpsGlobalAgent)),
      ];
      restoreGlobal = () => undo.forEach((u) => u());
    }
    globalWatchers.add(onRequest);
    return () => {
      if (!globalWatchers.delete(onRequest) || globalWatchers.size > 0) return;
      restoreGlobal?.();
      restoreGlobal = undefined;
    };
  }

  #track(req: ClientRequest, submission: Submission): void {
    holdLastByte(req, submission);
    req.once('response', (res: IncomingMessage) => submission.answered(res.headers));
  }
}
