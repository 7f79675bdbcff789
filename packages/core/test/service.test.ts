import { describe, expect, it } from 'vitest';
import { startProcess } from '../../../test/support/process.js';

const FIXTURE = 'packages/core/test/fixtures/warning-service.ts';

describe('runService', () => {
  it('logs process warnings as JSON lines: nothing but JSON on stdout and stderr', async () => {
    const env = { ...process.env, SLUICE_CONFIG: '' };
    const args = ['--conditions=@sluice/source', '--import', 'tsx', FIXTURE];
    const service = await startProcess('warned', args, env, '"event":"ready"');
    const code = await service.stop();
    expect(code, service.output()).toBe(0);
    const lines = service
      .output()
      .split('\n')
      .filter((line) => line !== '');
    const parsed = lines.map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}\nin:\n${service.output()}`);
      }
    });
    const warnings = parsed.filter((entry) => entry.event === 'warning');
    expect(warnings.map((w) => w.msg)).toEqual([
      "NodeVersionSupportWarning: a warning at load\nof several lines\n\nlike the SDK's",
      "NodeVersionSupportWarning: a warning at start\nof several lines\n\nlike the SDK's",
      'an old API',
    ]);
    expect(warnings[2]).toMatchObject({ warning: 'DeprecationWarning', code: 'DEP_TEST' });
    // The process's own name is kept (one `name` key a line).
    for (const line of lines) expect(line.match(/"name":/g)).toHaveLength(1);
    expect(parsed.some((entry) => entry.event === 'ready')).toBe(true);
  });
});
