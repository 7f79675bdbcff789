import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './support/fleet.js';
import { useFleet } from './support/use-fleet.js';

// A real SES provider (no `sandbox: true`, no static keys) takes its credentials the AWS way:
// the default chain. The sandbox here stands in for SES at the provider's `endpoint` and
// refuses (403) any request that does not carry the expected key and session token, so a
// message that arrives proves the chain's credentials went out on the wire.
const KEY = 'ASIASLUICECHAINTEST';
const TOKEN = 'session-token-from-sts';
const dir = mkdtempSync(join(tmpdir(), 'sluice-aws-'));
const credentialsFile = join(dir, 'credentials');
writeFileSync(
  credentialsFile,
  `[sluice-ci]\naws_access_key_id = ${KEY}\naws_secret_access_key = profile-secret\naws_session_token = ${TOKEN}\n`,
);

/** No credentials anywhere in the chain: no AWS_* keys, no shared files, no profile. */
const NONE = {
  AWS_ACCESS_KEY_ID: '',
  AWS_SECRET_ACCESS_KEY: '',
  AWS_SESSION_TOKEN: '',
  AWS_PROFILE: '',
  AWS_SHARED_CREDENTIALS_FILE: join(dir, 'missing-credentials'),
  AWS_CONFIG_FILE: join(dir, 'missing-config'),
  AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: '',
  AWS_CONTAINER_CREDENTIALS_FULL_URI: '',
  AWS_WEB_IDENTITY_TOKEN_FILE: '',
};

// An instance metadata service that accepts connections and never answers: what a pod or a
// laptop without one can look like. The chain's remote sources must give up on their own.
let metadata: Server;
let metadataUrl = '';
const sockets = new Set<Socket>();
beforeAll(async () => {
  metadata = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => metadata.listen(0, '127.0.0.1', resolve));
  metadataUrl = `http://127.0.0.1:${(metadata.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => metadata.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const fleet = useFleet({
  workers: 0,
  sandboxOptions: { accessKeyId: KEY, sessionToken: TOKEN },
  config: (sandbox) => ({ providers: { ses: { kind: 'ses', rate: 50, burst: 10, endpoint: sandbox.url } } }),
  // The scheduler reads the SES account too, with the same chain.
  env: { ...NONE, AWS_ACCESS_KEY_ID: KEY, AWS_SECRET_ACCESS_KEY: 'env-secret', AWS_SESSION_TOKEN: TOKEN },
});

async function sendAndWait(to: string): Promise<string> {
  const { id } = await fleet().client.send({ from: 'app@acme.test', to, subject: 'hi', text: 'hello' });
  const record = await waitFor(
    async () => {
      const r = await fleet().client.messages.status(id);
      return r && r.state !== 'queued' && r.state !== 'submitted' && r.state !== 'retrying' ? r : null;
    },
    20_000,
    `a final state for ${to}`,
  );
  expect(record.state, JSON.stringify(record)).toBe('sent');
  return id;
}

describe('a real SES provider without static keys', () => {
  it('sends with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN from the environment', async () => {
    const worker = await fleet().startWorker();
    expect(worker.output()).not.toContain('"event":"sandbox"');
    const id = await sendAndWait('env@accept.test');
    expect(
      fleet()
        .sandbox.accepted()
        .filter((m) => m.to.includes('env@accept.test')),
    ).toHaveLength(1);
    expect(await worker.stop()).toBe(0);
    expect(id).toBeTruthy();
  });

  it('sends with the keys of AWS_PROFILE in the shared credentials file', async () => {
    const worker = await fleet().startWorker({
      env: { ...NONE, AWS_SHARED_CREDENTIALS_FILE: credentialsFile, AWS_PROFILE: 'sluice-ci' },
    });
    await sendAndWait('profile@accept.test');
    expect(
      fleet()
        .sandbox.accepted()
        .filter((m) => m.to.includes('profile@accept.test')),
    ).toHaveLength(1);
    expect(await worker.stop()).toBe(0);
  });

  it('without any credentials refuses to start, naming the provider, and does not wait on the metadata service', async () => {
    const started = Date.now();
    const failure = await fleet()
      .startWorker({ env: { ...NONE, AWS_EC2_METADATA_SERVICE_ENDPOINT: metadataUrl } })
      .then(
        () => null,
        (err: unknown) => err as Error,
      );
    const tookMs = Date.now() - started;
    expect(failure?.message).toMatch(/exited with 1 before it was ready/);
    expect(failure?.message).toMatch(/providers\.ses: no AWS credentials for this real SES provider/);
    // Bounded: each remote source gives up after 2 s, the whole after the provider's timeoutMs.
    expect(tookMs).toBeLessThan(15_000);
    // Nothing was sent by it, and nothing went to a sandbox in its place.
    expect(fleet().sandbox.accepted()).toHaveLength(2);
  });
});
