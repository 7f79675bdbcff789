import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * The longest a keep-alive connection may sit idle in a pool and still carry a send: below
 * the idle timeouts of the servers and load balancers ESPs sit behind, as far as they are
 * published (Node's http server: 5 s, the sandbox's; AWS load balancers: 60 s by default;
 * nginx: 75 s), so that a request does not meet a connection the server is closing even
 * when the server announces nothing. Busy senders reuse their connections well within it;
 * a connection idle longer costs the next send a new handshake, nothing else.
 */
const FREE_SOCKET_IDLE_MS = 4_000;

/** How far below the server's `Keep-Alive: timeout=N` a connection is retired (Node's own buffer). */
const KEEP_ALIVE_HINT_MARGIN_MS = 1_000;

const ANSWERED = Symbol('sluice.answered');

/** When a connection's last answer came, and how long it may idle after it. */
interface Answered {
  at: number;
  idleMs: number;
}

type Stamped = Duplex & { [ANSWERED]?: Answered };

/** How long a connection may idle after an answer carrying `keepAlive` (its `Keep-Alive` header). */
function idleLimit(keepAlive: string | undefined): number {
  const hint = /(?:^|[,\s])timeout=(\d+)/i.exec(keepAlive ?? '')?.[1];
  if (hint === undefined) return FREE_SOCKET_IDLE_MS;
  return Math.max(0, Math.min(FREE_SOCKET_IDLE_MS, Number(hint) * 1000 - KEEP_ALIVE_HINT_MARGIN_MS));
}

/** Notes on `req`'s connection when its answer came and how long the connection may idle after it. */
export function noteAnswer(req: ClientRequest): void {
  req.once('response', (res: IncomingMessage) => {
    const socket = res.socket as Stamped | null;
    const value = res.headers['keep-alive'];
    const header = Array.isArray(value) ? value.join(', ') : value;
    if (socket) socket[ANSWERED] = { at: performance.now(), idleMs: idleLimit(header) };
  });
}

/** Milliseconds `socket` may still idle; `Infinity` when it carried no answer we saw. */
function idleLeft(socket: Stamped, now: number): number {
  const answered = socket[ANSWERED];
  return answered === undefined ? Number.POSITIVE_INFINITY : answered.at + answered.idleMs - now;
}

/** Whether a request may go out on `socket`: open both ways, and not idle too long. */
function reusable(socket: Socket, now: number): boolean {
  if (socket.destroyed || !socket.writable || socket.readableEnded) return false;
  return idleLeft(socket, now) > 0;
}

/**
 * Retires the idle connections of `agent` a request must not reuse: closed by the server
 * (its FIN read, not yet destroyed) or idle past their limit. Called as a request is given
 * to the agent, before it picks a free connection: the timers of {@link retireWhenIdle} run
 * late when the event loop is busy, the clock at reuse does not. Node's agent only skips
 * destroyed connections at the head of a pool, so retired ones are taken out of it (as its
 * own `removeSocket` does) rather than left for their 'close'.
 */
export function retireStale(agent: Agent, now = performance.now()): void {
  const pools = agent.freeSockets as Record<string, Socket[] | undefined>;
  for (const [name, pool] of Object.entries(pools)) {
    if (pool === undefined || pool.every((socket) => reusable(socket, now))) continue;
    const keep = pool.filter((socket) => reusable(socket, now));
    for (const socket of pool) if (!keep.includes(socket)) socket.destroy();
    pool.splice(0, pool.length, ...keep);
    if (pool.length === 0) delete pools[name];
  }
}

/**
 * Has `agent` close an idle connection when its limit ({@link idleLimit}) runs out. Node's
 * agent honours a server's `Keep-Alive: timeout=N` only when it has a `timeout` of its own
 * larger than the hint (lib/_http_agent.js `keepSocketAlive`, Node 20 and 24); without one
 * its idle connections live until the server closes them, and a request may meet that close.
 * Node destroys an idle connection whose socket timeout fires; on reuse the timeout is
 * cleared again, as a new connection has none.
 */
export function retireWhenIdle(agent: Agent): void {
  const keepSocketAlive = agent.keepSocketAlive.bind(agent) as unknown as (socket: Duplex) => boolean;
  const reuseSocket = agent.reuseSocket.bind(agent);
  Object.defineProperty(agent, 'keepSocketAlive', {
    configurable: true,
    writable: true,
    value(socket: Duplex): boolean {
      if (!keepSocketAlive(socket)) return false;
      const left = idleLeft(socket, performance.now());
      if (left <= 0) return false;
      if (Number.isFinite(left)) (socket as Socket).setTimeout(Math.ceil(left));
      return true;
    },
  });
  Object.defineProperty(agent, 'reuseSocket', {
    configurable: true,
    writable: true,
    value(socket: Duplex, req: ClientRequest): void {
      reuseSocket(socket, req);
      (socket as Socket).setTimeout(0);
    },
  });
}
