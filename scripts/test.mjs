// `npm test`: installs, then runs the whole suite against sources on a private Redis
// (or REDIS_URL). Extra arguments go to vitest. The admin dashboard's browser test needs
// a Chromium: SLUICE_CHROMIUM names one, else /usr/bin/chromium, installed from Debian's
// packages here when missing (as root with apt-get).
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { checkNode, pnpm } from './pnpm.mjs';

function ensureChromium() {
  const path = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';
  if (existsSync(path)) return;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get && [ "$(id -u)" = 0 ]'], { stdio: 'ignore' });
  if (apt.status === 0) {
    console.error('sluice: installing Debian chromium for the dashboard browser test');
    const install = spawnSync(
      'sh',
      ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium'],
      { stdio: 'inherit' },
    );
    if (install.status === 0 && existsSync(path)) return;
  }
  console.error(
    `sluice: the browser test needs Chromium at ${path} (apt-get install chromium, or set SLUICE_CHROMIUM)`,
  );
  process.exit(1);
}

checkNode();
pnpm(['install', '--frozen-lockfile', '--reporter=silent']);
ensureChromium();
pnpm(['exec', 'vitest', 'run', ...process.argv.slice(2)]);
