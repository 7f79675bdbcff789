// `npm test`: installs, then runs the whole suite against sources on a private Redis
// (or REDIS_URL). Extra arguments go to vitest. The admin dashboard's browser test needs
// a Chromium: SLUICE_CHROMIUM names one, else /usr/bin/chromium, installed from Debian's
// packages here when missing (as root with apt-get).
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { checkNode, pnpm } from './pnpm.mjs';

/**
 * A Debian tool a test needs at `path`: installed with apt-get when missing and we are root,
 * else the run stops saying how to get it (a test is never skipped for want of it).
 */
function ensureTool(path, pkg, why, setting) {
  if (existsSync(path)) return;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get && [ "$(id -u)" = 0 ]'], { stdio: 'ignore' });
  if (apt.status === 0) {
    console.error(`sluice: installing Debian ${pkg} for ${why}`);
    const install = spawnSync(
      'sh',
      ['-c', `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${pkg}`],
      { stdio: 'inherit' },
    );
    if (install.status === 0 && existsSync(path)) return;
  }
  console.error(`sluice: ${why} needs ${path} (apt-get install ${pkg}, or set ${setting})`);
  process.exit(1);
}

function ensureChromium() {
  ensureTool(
    process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium',
    'chromium',
    'the dashboard browser test',
    'SLUICE_CHROMIUM',
  );
}

/** `promtool check metrics` over every process's `/metrics` (test/fleet-metrics.test.ts). */
function ensurePromtool() {
  ensureTool(process.env.SLUICE_PROMTOOL ?? '/usr/bin/promtool', 'prometheus', 'the metrics test', 'SLUICE_PROMTOOL');
}

checkNode();
pnpm(['install', '--frozen-lockfile', '--reporter=silent']);
ensureChromium();
ensurePromtool();
pnpm(['exec', 'vitest', 'run', ...process.argv.slice(2)]);
