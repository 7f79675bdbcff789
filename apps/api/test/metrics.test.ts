import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromSources, startProcess } from '../../../test/support/process.js';
import { useRedisPrefix } from '../../../test/support/redis-prefix.js';
import { freePort } from '../../../test/support/redis-server.js';

// The api faces the ESPs' webhooks, so its public port serves no `/metrics`: like every
// fleet process, it serves them on `metrics.host:metrics.port` (loopback by default).
describe('the api started with SLUICE_METRICS_PORT', () => {
  const r = useRedisPrefix();

  it('serves /metrics on the metrics port, on loopback, and not on its public port', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-api-metrics-'));
    const configPath = join(dir, 'sluice.yaml');
    const [apiPort, metricsPort] = [await freePort(), await freePort()];
    writeFileSync(
      configPath,
      JSON.stringify({
        redis: { prefix: r.prefix },
        providers: { ses: { kind: 'ses', sandbox: true, rate: 50 } },
        api: { port: apiPort },
      }),
    );
    const env = {
      ...process.env,
      SLUICE_CONFIG: configPath,
      REDIS_URL: r.url,
      SLUICE_METRICS_PORT: String(metricsPort),
    };
    const api = await startProcess('api', fromSources('api'), env, 'api listening');
    try {
      expect(api.output()).toContain(`"url":"http://127.0.0.1:${metricsPort}/metrics"`);
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('sluice_status_up 1');
      expect(text).toContain('sluice_key_configured_rate{scope="provider",name="ses"} 50');
      expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
      // The public port: webhooks, and no metrics.
      expect((await fetch(`http://127.0.0.1:${apiPort}/metrics`)).status).toBe(404);
      expect(
        (
          await fetch(`http://127.0.0.1:${apiPort}/webhooks/mailgun`, {
            method: 'POST',
            body: '{}',
            headers: { 'content-type': 'application/json' },
          })
        ).status,
      ).toBe(503);
    } finally {
      expect(await api.stop()).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
