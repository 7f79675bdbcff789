import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A private `redis-server` (noeviction, no persistence) on a free port. */
export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /** @defaultValue a free one */
  port?: number;
  /**
   * Where it keeps an append-only file, kept after `stop()`: a server started again on the
   * same directory has the data of the last. @defaultValue a directory of its own, no persistence
   */
  dir?: string;
}

/** Starts a private redis-server; rejects with a clear message if the binary is missing. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'sluice-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      options.dir === undefined ? 'no' : 'yes',
      '--dir',
      dir,
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.once('error', (err) =>
      reject(new Error(`cannot start redis-server (set REDIS_URL or put redis-server on the PATH): ${err.message}`)),
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}
