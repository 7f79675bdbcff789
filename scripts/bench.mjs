// `pnpm bench [--quick]`: installs, then runs test/bench/run.ts against sources on a
// private Redis. Not part of `npm test`.
import { spawnSync } from 'node:child_process';
import { checkNode, pnpm } from './pnpm.mjs';

checkNode();
pnpm(['install', '--frozen-lockfile', '--reporter=silent']);
const result = spawnSync(
  process.execPath,
  ['--conditions=@sluice/source', '--import', 'tsx', 'test/bench/run.ts', ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
process.exit(result.status ?? 1);
