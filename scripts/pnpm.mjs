// Finds pnpm (the pinned version via npx when none is installed) and runs it.
import { spawnSync } from 'node:child_process';

const PINNED = 'pnpm@12.4.2';

/** The command that runs pnpm, and its first arguments: an installed pnpm, else the pinned one through npx. */
export function pnpmCommand() {
  const local = spawnSync('pnpm', ['--version'], { stdio: 'ignore' });
  return local.status === 0 ? ['pnpm', []] : ['npx', ['--yes', PINNED]];
}

/** Runs pnpm with args; exits the process on failure. */
export function pnpm(args, options = {}) {
  const [cmd, pre] = pnpmCommand();
  const result = spawnSync(cmd, [...pre, ...args], { stdio: 'inherit', ...options });
  if (result.status !== 0) {
    console.error(`sluice: \`pnpm ${args.join(' ')}\` failed`);
    process.exit(result.status ?? 1);
  }
}

/**
 * Fails with a clear message on Node older than 20; on Node 20 (past its end of life since
 * April 2026, still working) prints a one-line note: 22 and later are the supported ones.
 */
export function checkNode() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 20) {
    console.error(`sluice: Node.js 20 or newer is needed (this is ${process.versions.node})`);
    process.exit(1);
  }
  if (major < 22) {
    console.error(
      `sluice: note: Node.js ${process.versions.node} is past its end of life; Sluice supports Node 22 and later`,
    );
  }
}
