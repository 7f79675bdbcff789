import { Agent as HttpAgent, type AgentOptions, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

/** The request header that names the message a request carries (stripped of nothing: ESPs ignore it). */
export const MESSAGE_HEADER = 'x-sluice-message-id';

type AddRequest = (this: HttpAgent, req: ClientRequest, ...rest: unknown[]) => void;

/**
 * Tells when a request has been written out in full: from then on the ESP may act on it
 * even if we never see the answer. Node's agents get every request through
 * `addRequest` (not in @types/node, stable since Node 0.x), which is where we listen
 * for the request's `finish`.
 */
export class SubmitTracker {
  readonly #waiting = new Map<string, () => void>();

  /** Calls `onSubmitted` once the request for `id` is fully written. Returns a cancel function. */
  watch(id: string, onSubmitted: () => void): () => void {
    this.#waiting.set(id, onSubmitted);
    return () => this.#waiting.delete(id);
  }

  /** An http and https agent that report submissions to this tracker. */
  agents(options: AgentOptions): { httpAgent: HttpAgent; httpsAgent: HttpsAgent } {
    const track = (req: ClientRequest): void => {
      const id = req.getHeader(MESSAGE_HEADER);
      const callback = typeof id === 'string' ? this.#waiting.get(id) : undefined;
      if (callback) req.once('finish', callback);
    };
    const wrap = <A extends HttpAgent>(agent: A): A => {
      const proto = Object.getPrototypeOf(agent) as { addRequest: AddRequest };
      const original = proto.addRequest;
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
}
