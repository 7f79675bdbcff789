// `npm test`: installs, then runs the whole suite against sources on a private Redis
// (or REDIS_URL). Extra arguments go to vitest.
import { checkNode, pnpm } from './pnpm.mjs';

checkNode();
pnpm(['install', '--frozen-lockfile', '--reporter=silent']);
pnpm(['exec', 'vitest', 'run', ...process.argv.slice(2)]);
