// Finds pnpm (the pinned version via npx when none is installed) and runs it.
import { spawnSync } from 'node:child_process';

const PINNED = 'pnpm@12.4.2';

/** Runs pnpm with args; exits the process on failure. */
export function pnpm(args, options = {}) {
  const local = spawnSync('pnpm', ['--version'], { stdio: 'ignore' });
  const [cmd, pre] = local.status === 0 ? ['pnpm', []] : ['npx', ['--yes', PINNED]];
  const result = spawnSync(cmd, [...pre, ...args], { stdio: 'inherit', ...options });
  if (result.status !== 0) {
    console.error(`sluice: \`pnpm ${args.join(' ')}\` failed`);
    process.exit(result.status ?? 1);
  }
}

/** Fails with a clear message on Node older than 20. */
export function checkNode() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 20) {
    console.error(`sluice: Node.js 20 or newer is needed (this is ${process.versions.node})`);
    process.exit(1);
  }
}
