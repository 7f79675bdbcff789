import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { createSandbox, type Sandbox } from './sandbox.js';
import { loadScenarioFile } from './scenario-file.js';
import { ScenarioError, type Scenario } from './scenario.js';

const USAGE = 'usage: sandbox [--port <n>] [--host <address>] [--scenario <file.yaml>]';

/** A startup error: one readable line on stderr, then exit 1. */
function fail(message: string): never {
  process.stderr.write(`sandbox: ${message}\n`);
  process.exit(1);
}

function parseCli(): { port: number; host: string; scenarioPath: string | undefined } {
  let values;
  try {
    ({ values } = parseArgs({
      options: { port: { type: 'string' }, host: { type: 'string' }, scenario: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    fail(`${(error as Error).message}\n${USAGE}`);
  }
  const port = Number(values.port ?? '4566');
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    fail(`--port must be an integer 0..65535, got ${values.port}`);
  return { port, host: values.host ?? '127.0.0.1', scenarioPath: values.scenario };
}

async function main(): Promise<void> {
  const { port, host, scenarioPath } = parseCli();
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
    sandbox = await createSandbox({ port, host, scenario, logger });
  } catch (error) {
    fail(`cannot listen on ${host}:${port}: ${(error as Error).message}`);
  }
  process.stdout.write(`${JSON.stringify({ event: 'listening', url: sandbox.url })}\n`);

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
