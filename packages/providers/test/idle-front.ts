import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { track } from './support.js';

/** A TCP front of the sandbox that closes idle keep-alive connections as an ESP's edge does. */
export interface IdleFront {
  /** Base URL for the adapters (`http://127.0.0.1:<port>`). */
  readonly url: string;
  /** Requests the front refused unread: they came on a connection it had closed as idle. */
  readonly refused: number;
  /** Connections the front was asked to accept so far. */
  readonly connections: number;
  /** Connections the client closed itself (its FIN came first). */
  readonly closedByClient: number;
  /**
   * Closes every connection now (FIN), as a server's idle timer does: a request the client
   * writes before it reads the FIN meets a closed socket.
   */
  closeIdle(): void;
}

/**
 * Forwards every connection to `target` byte for byte, but a connection that has carried
 * nothing either way for `closesIdleAfterMs` is closed: a request that arrives on it is
 * never forwarded and is answered with a reset, as a server's kernel answers bytes sent to
 * a socket it closed at its idle timeout while the request was on its way. The client
 * cannot tell it apart from a server that closed just then; the sandbox never sees the
 * request. `announce` replaces what the sandbox announces (`Keep-Alive: timeout=5`) with
 * another timeout, or with none.
 */
export async function idleFront(
  target: { port: number },
  closesIdleAfterMs: number,
  announce?: { timeoutSeconds: number | undefined },
): Promise<IdleFront> {
  // The sandbox's own `Keep-Alive: timeout=5` rewritten (or removed) to what this front
  // does: response heads arrive in one chunk, and a head's length is free to change.
  const rewrite = (chunk: Buffer): Buffer => {
    if (announce === undefined) return chunk;
    const to = announce.timeoutSeconds === undefined ? '' : `Keep-Alive: timeout=${announce.timeoutSeconds}\r\n`;
    return Buffer.from(chunk.toString('latin1').replace(/Keep-Alive: timeout=\d+\r\n/i, to), 'latin1');
  };
  const open = new Set<Socket>();
  let refused = 0;
  let connections = 0;
  let closedByClient = 0;
  const server = createServer((client) => {
    connections += 1;
    open.add(client);
    let last = performance.now();
    const upstream = connect(target.port, '127.0.0.1');
    const drop = (): void => {
      open.delete(client);
      upstream.destroy();
      client.destroy();
    };
    client.on('error', drop).on('close', drop);
    client.on('end', () => {
      if (open.has(client)) closedByClient += 1;
      drop();
    });
    upstream.on('error', drop).on('close', drop);
    upstream.on('data', (chunk: Buffer) => {
      last = performance.now();
      client.write(rewrite(chunk));
    });
    client.on('data', (chunk: Buffer) => {
      if (performance.now() - last >= closesIdleAfterMs) {
        refused += 1;
        open.delete(client);
        upstream.destroy();
        client.resetAndDestroy();
        return;
      }
      last = performance.now();
      upstream.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  track({
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get refused() {
      return refused;
    },
    get connections() {
      return connections;
    },
    get closedByClient() {
      return closedByClient;
    },
    closeIdle() {
      for (const socket of open) socket.destroy();
      open.clear();
    },
  };
}
