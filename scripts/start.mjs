// `npm start`: the quick start. Installs and builds, then runs a whole fleet on this
// machine (Redis, the sandbox ESP, one scheduler, two workers, the admin app) and the demo
// producer, whose status lines are all the terminal shows; every process logs to .sluice/logs/.
// The admin app listens on loopback behind a token made for this run (printed once).
// Ctrl-C (or SIGTERM, or --duration <seconds>) stops it in order and waits for the drain.
import { randomBytes } from 'node:crypto';
import { accessSync, constants, createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkNode, pnpm } from './pnpm.mjs';
import { startProcess } from './process.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LOG_DIR = '.sluice/logs';
const CONFIG = 'config/demo.yaml';
const SCENARIO = 'config/demo-scenario.yaml';
const USAGE = 'usage: npm start [-- --duration <seconds>]';
const READY_TIMEOUT_MS = 60_000;
const TAIL_LINES = 20;
/** How long each stage may take to stop before it is killed. Workers drain (worker.drainTimeoutMs is 30 s). */
const STOP_TIMEOUT_MS = { demo: 15_000, fleet: 45_000, admin: 10_000, sandbox: 10_000, redis: 10_000 };
/** The admin app's port when it is free (its default); else any free one. */
const ADMIN_PORT = 8090;

const say = (line) => process.stdout.write(`sluice: ${line}\n`);
const complain = (line) => process.stderr.write(`sluice: ${line}\n`);

checkNode();
const { duration } = parseCli();

// 1. Redis: REDIS_URL, else a private redis-server. Checked before the slow part.
const redisUrl = process.env.REDIS_URL || undefined;
if (redisUrl === undefined && !onPath('redis-server')) {
  complain('Redis is needed: set REDIS_URL or put redis-server on the PATH');
  process.exit(1);
}
if (redisUrl !== undefined) {
  try {
    await pingRedis(redisUrl);
  } catch (error) {
    complain(`cannot reach Redis at ${redacted(redisUrl)} (REDIS_URL): ${error.message}`);
    process.exit(1);
  }
}

// 2. Install and build.
say('installing dependencies and building (the first run takes a while)…');
pnpm(['install', '--frozen-lockfile', '--reporter=silent'], { cwd: ROOT });
pnpm(['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: ROOT });

// 3. The fleet, one child process each.
const children = [];
let stopping = false;
// Here, before the signal handlers: a Ctrl-C while run() is still awaited calls shutdown(),
// which must not find it uninitialised.
let shuttingDown;
let redisDir;
let durationTimer;

process.on('SIGINT', () => onSignal('SIGINT'));
process.on('SIGTERM', () => onSignal('SIGTERM'));
process.on('SIGHUP', () => onSignal('SIGHUP'));
// Last resort (a bug in this script): never leave a child behind.
process.on('exit', () => {
  for (const c of children) if (c.proc.running) c.proc.child.kill('SIGKILL');
});

mkdirSync(join(ROOT, LOG_DIR), { recursive: true });
say(`logs of every process go to ${LOG_DIR}/ (e.g. tail -f ${LOG_DIR}/worker-1.log)`);

try {
  await run();
} catch (error) {
  complain(`start failed: ${error.stack ?? error}`);
  await shutdown(1);
}

async function run() {
  let url = redisUrl;
  if (url === undefined) {
    const port = await freePort();
    redisDir = mkdtempSync(join(tmpdir(), 'sluice-redis-'));
    // prettier-ignore
    const redis = startChild('redis', 'redis-server', [
      '--port', String(port), '--bind', '127.0.0.1',
      '--save', '', '--appendonly', 'no', '--dir', redisDir,
      '--maxmemory-policy', 'noeviction',
    ]);
    if ((await waitFor(redis, (line) => line.includes('Ready to accept connections'), 'redis-server')) === undefined)
      return;
    url = `redis://127.0.0.1:${port}`;
    say(`Redis: a private redis-server at ${url} (nothing is kept after it stops)`);
  } else {
    say(`Redis: ${redacted(url)} (REDIS_URL; the demo's keys are under the prefix \`demo\`)`);
  }

  if (stopping) return;
  const sandbox = startNode('sandbox', [
    'apps/sandbox/dist/main.js',
    '--port',
    '0',
    '--smtp-port',
    '0',
    '--scenario',
    SCENARIO,
  ]);
  const listening = await waitFor(sandbox, (line) => line.includes('"event":"listening"'), 'the sandbox');
  if (listening === undefined) return;
  const { url: sandboxUrl, smtpPort } = JSON.parse(listening);
  say(`sandbox ESP at ${sandboxUrl} (SES v2, SendGrid v3, Mailgun v3) and smtp://127.0.0.1:${smtpPort}`);

  if (stopping) return;
  const env = {
    ...childEnv(),
    SLUICE_CONFIG: CONFIG,
    REDIS_URL: url,
    SLUICE_SANDBOX_URL: sandboxUrl,
    SLUICE_SANDBOX_SMTP: `127.0.0.1:${smtpPort}`,
  };
  const fleet = [
    startNode('scheduler', ['apps/scheduler/dist/main.js'], env),
    startNode('worker-1', ['apps/worker/dist/main.js'], env),
    startNode('worker-2', ['apps/worker/dist/main.js'], env),
  ];
  // The admin app (dashboard, Bull Board, JSON API) behind a token of this run's: never a
  // default credential, and gone when the run ends.
  const token = randomBytes(32).toString('base64url');
  const adminPort = (await portIsFree(ADMIN_PORT)) ? ADMIN_PORT : await freePort();
  const admin = startNode('admin', ['apps/admin/dist/main.js'], {
    ...env,
    SLUICE_ADMIN_TOKENS: `demo:${token}`,
    SLUICE_ADMIN_PORT: String(adminPort),
  });
  const ready = await Promise.all([
    ...fleet.map((c) => waitFor(c, (line) => line.includes('"event":"ready"'), c.name)),
    waitFor(admin, (line) => line.includes('admin listening'), 'the admin app'),
  ]);
  if (ready.includes(undefined)) return;
  if (stopping) return;
  say(
    `dashboard: http://127.0.0.1:${adminPort}/dashboard, Bull Board at /board: sign in as demo, password ${token} (this run's token)`,
  );
  say('1 scheduler and 2 workers ready; starting the demo (Ctrl-C stops everything)');

  startNode('demo', ['apps/demo/dist/main.js'], env, { show: true });
  if (duration !== undefined) {
    durationTimer = setTimeout(() => {
      say(`--duration ${duration} reached: stopping`);
      void shutdown(0);
    }, duration * 1000);
  }
}

function parseCli() {
  let values;
  try {
    ({ values } = parseArgs({ options: { duration: { type: 'string' } }, strict: true, allowPositionals: false }));
  } catch (error) {
    complain(`${error.message}\n${USAGE}`);
    process.exit(1);
  }
  if (values.duration === undefined) return { duration: undefined };
  const duration = Number(values.duration);
  if (!(duration > 0)) {
    complain(`--duration must be a positive number of seconds, got ${values.duration}\n${USAGE}`);
    process.exit(1);
  }
  return { duration };
}

function onPath(command) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

/** The URL with its password hidden, for messages. */
function redacted(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** Sends PING; any reply (even NOAUTH) proves a Redis is listening there. */
function pingRedis(url) {
  return new Promise((resolve, reject) => {
    let u;
    try {
      u = new URL(url);
    } catch {
      reject(new Error('not a URL'));
      return;
    }
    const host = u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
    const port = Number(u.port || 6379);
    const socket = u.protocol === 'rediss:' ? connectTls({ host, port, servername: host }) : connect({ host, port });
    socket.setTimeout(3_000, () => socket.destroy(new Error('no answer within 3 s')));
    socket.once('error', reject);
    socket.once(u.protocol === 'rediss:' ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      if (/^[+-]/.test(data.toString())) resolve();
      else reject(new Error('what answered is not Redis'));
    });
  });
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Whether `port` can be listened on at 127.0.0.1 now. */
async function portIsFree(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The children's environment: ours without ESP credentials, so the demo never reaches a real ESP. */
function childEnv() {
  const credential = (k) =>
    k.startsWith('AWS_') || ['SENDGRID_API_KEY', 'MAILGUN_API_KEY', 'SMTP_PASSWORD'].includes(k);
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !credential(k)));
}

function startNode(name, args, env = childEnv(), options = {}) {
  return startChild(name, process.execPath, args, env, options);
}

/**
 * Starts a child whose output goes to .sluice/logs/<name>.log (and to the terminal with
 * `show`). It gets a process group of its own, so Ctrl-C reaches only this script, which
 * then stops the children in order.
 */
function startChild(name, command, args, env = childEnv(), { show = false } = {}) {
  const logPath = join(LOG_DIR, `${name}.log`);
  const log = createWriteStream(join(ROOT, logPath));
  const proc = startProcess(command, args, { cwd: ROOT, env, detached: true, log, tailLines: TAIL_LINES });
  if (show) proc.onLine((line) => process.stdout.write(`${line}\n`));
  const c = { name, proc, logPath, log };
  void proc.closed.then(({ code, signal }) => {
    if (stopping) return;
    complain(
      `${name} exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`}); the last lines of ${logPath}:`,
    );
    printTail(c);
    void shutdown(1);
  });
  children.push(c);
  return c;
}

function printTail(c) {
  for (const line of c.proc.tail()) process.stderr.write(`  ${line}\n`);
}

/** The first line that passes `test`; undefined if the child ended (reported already) or took too long. */
async function waitFor(c, test, what) {
  const { line, why } = await c.proc.waitForLine(test, { timeoutMs: READY_TIMEOUT_MS });
  if (why === 'timeout' && !stopping) {
    complain(`${what} was not ready after ${READY_TIMEOUT_MS / 1000} s; the last lines of ${c.logPath}:`);
    printTail(c);
    void shutdown(1);
  }
  return line;
}

function onSignal(signal) {
  if (!stopping) {
    process.stdout.write('\n');
    say(
      `${signal}: stopping (the workers finish what they hold; ${signal === 'SIGINT' ? 'Ctrl-C' : signal} again kills everything)`,
    );
    void shutdown(0);
    return;
  }
  complain('killing every process now');
  for (const c of children) if (c.proc.running) c.proc.child.kill('SIGKILL');
  process.exit(1);
}

/** Sends SIGTERM and waits; kills on timeout. Resolves whether it stopped cleanly. */
async function stopChild(c, timeoutMs) {
  if (!c.proc.running) return true;
  const result = await c.proc.stop({ signal: 'SIGTERM', timeoutMs });
  if (result.killed) {
    complain(`${c.name} did not stop within ${timeoutMs / 1000} s: killed; the last lines of ${c.logPath}:`);
    printTail(c);
    return false;
  }
  // Killed by the SIGTERM itself: it had not installed its handler yet (still starting).
  if (result.code !== 0 && result.signal !== 'SIGTERM') {
    complain(
      `${c.name} stopped with ${result.signal ? `signal ${result.signal}` : `code ${result.code}`}; the last lines of ${c.logPath}:`,
    );
    printTail(c);
    return false;
  }
  return true;
}

/** Stops in order: demo, then workers and scheduler (they drain), admin, sandbox, Redis. Exits. */
function shutdown(code) {
  shuttingDown ??= (async () => {
    stopping = true;
    clearTimeout(durationTimer);
    const named = (prefix) => children.filter((c) => c.name === prefix || c.name.startsWith(`${prefix}-`));
    const stages = [
      [named('demo'), STOP_TIMEOUT_MS.demo],
      [[...named('worker'), ...named('scheduler')], STOP_TIMEOUT_MS.fleet],
      [named('admin'), STOP_TIMEOUT_MS.admin],
      [named('sandbox'), STOP_TIMEOUT_MS.sandbox],
      [named('redis'), STOP_TIMEOUT_MS.redis],
    ];
    let clean = true;
    for (const [group, timeoutMs] of stages) {
      const results = await Promise.all(group.map((c) => stopChild(c, timeoutMs)));
      if (results.includes(false)) clean = false;
    }
    if (redisDir) rmSync(redisDir, { recursive: true, force: true });
    await Promise.all(children.map((c) => new Promise((resolve) => c.log.end(resolve))));
    const exitCode = clean ? code : 1;
    say(exitCode === 0 ? 'stopped' : `stopped (exit ${exitCode}); logs in ${LOG_DIR}/`);
    process.exit(exitCode);
  })();
  return shuttingDown;
}
