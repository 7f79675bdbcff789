import { parseArgs } from 'node:util';
import { pino } from 'pino';
import type { Keep } from './recorder.js';
import { createSandbox, type Sandbox } from './sandbox.js';
import { loadScenarioFile } from './scenario-file.js';
import { ScenarioError, type Scenario } from './scenario.js';

const USAGE =
  'usage: sandbox [--port <n>] [--smtp-port <n>] [--host <address>] [--scenario <file.yaml>] [--keep messages|counts]';
const DEFAULT_SMTP_PORT = 2525;

interface Cli {
  port: number;
  /** `undefined` when not given: then {@link DEFAULT_SMTP_PORT}, or a free port if that is taken. */
  smtpPort: number | undefined;
  host: string;
  scenarioPath: string | undefined;
  keep: Keep;
}

/** A startup error: one readable line on stderr, then exit 1. */
function fail(message: string): never {
  process.stderr.write(`sandbox: ${message}\n`);
  process.exit(1);
}

function parsePort(flag: string, value: string): number {
  const port = Number(value);
  if (value.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535)
    fail(`--${flag} must be an integer 0..65535, got ${value}`);
  return port;
}

function parseCli(): Cli {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string' },
        'smtp-port': { type: 'string' },
        host: { type: 'string' },
        scenario: { type: 'string' },
        keep: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    fail(`${(error as Error).message}\n${USAGE}`);
  }
  const keep = values.keep ?? 'messages';
  if (keep !== 'messages' && keep !== 'counts') fail(`--keep must be messages or counts, got ${keep}`);
  return {
    port: parsePort('port', values.port ?? '4566'),
    smtpPort: values['smtp-port'] === undefined ? undefined : parsePort('smtp-port', values['smtp-port']),
    host: values.host ?? '127.0.0.1',
    scenarioPath: values.scenario,
    keep,
  };
}

/** The error of a port already bound, when it is `port`. */
function isPortTaken(error: unknown, port: number): boolean {
  const e = error as NodeJS.ErrnoException & { port?: number };
  return e.code === 'EADDRINUSE' && e.port === port;
}

async function main(): Promise<void> {
  const { port, smtpPort, host, scenarioPath, keep } = parseCli();
  // stdout carries only the listening line, so a parent process can read it; logs go to stderr.
  const logger = pino({ name: 'sandbox' }, pino.destination({ dest: 2, sync: true }));

  let scenario: Scenario | undefined;
  if (scenarioPath !== undefined) {
    try {
      scenario = await loadScenarioFile(scenarioPath);
    } catch (error) {
      if (error instanceof ScenarioError) fail(error.message);
      throw error;
    }
  }

  let sandbox: Sandbox;
  try {
    try {
      sandbox = await createSandbox({ port, smtpPort: smtpPort ?? DEFAULT_SMTP_PORT, host, scenario, logger, keep });
    } catch (error) {
      // The default SMTP port being taken (say, by another sandbox) is no reason not to start.
      if (smtpPort !== undefined || !isPortTaken(error, DEFAULT_SMTP_PORT)) throw error;
      logger.warn(`SMTP port ${DEFAULT_SMTP_PORT} is taken; listening on a free port instead`);
      sandbox = await createSandbox({ port, smtpPort: 0, host, scenario, logger, keep });
    }
  } catch (error) {
    fail(`cannot listen on ${host}: ${(error as Error).message}`);
  }
  // Parents read this line: `event` stays first and `url` keeps its form; `smtpPort` is extra.
  process.stdout.write(`${JSON.stringify({ event: 'listening', url: sandbox.url, smtpPort: sandbox.smtpPort })}\n`);
  // What the api needs to verify the scenario's webhook reports; the keys change every start.
  logger.info({ webhookKeys: `${sandbox.url}/_sandbox/webhook-keys` }, 'webhook verification keys');

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      // A second signal means the operator does not want to wait.
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping');
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'close failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => fail((error as Error).stack ?? String(error)));
