/** The logging a service needs (pino fits). */
export interface ServiceLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  fatal(obj: object, msg?: string): void;
}

/** Options of {@link runService}. */
export interface RunServiceOptions {
  /** Used in log lines: `scheduler`, `worker`. */
  name: string;
  /** Where the process's lines go, its warnings (`warn`) too. */
  logger: ServiceLogger & { warn(obj: object, msg?: string): void };
  /**
   * Starts the service (loading its config: a bad one fails here, logged); resolves with
   * what stops it and how long stopping may take before the process gives up and exits 1.
   */
  start(): Promise<{ close(): Promise<void>; shutdownDeadlineMs: number }>;
}

/**
 * Runs a long-lived process: start, log `{"event":"ready"}`, and on SIGTERM or SIGINT close
 * once (a second signal is ignored) and exit 0, or 1 if closing fails or hangs past the
 * deadline (say Redis is gone). A failed start logs why and exits 1. Process warnings are
 * logged as `{"event":"warning"}` lines instead of Node's plain text.
 */
export function runService(options: RunServiceOptions): void {
  const { logger, name } = options;
  logWarnings(logger);
  const main = async (): Promise<void> => {
    const service = await options.start();
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      setTimeout(() => {
        logger.error({}, `${name}: shutdown did not finish in time; exiting`);
        process.exit(1);
      }, service.shutdownDeadlineMs).unref();
      logger.info({ signal }, `${name} stopping`);
      service
        .close()
        .then(() => process.exit(0))
        .catch((err: unknown) => {
          logger.error({ err }, `${name}: close failed`);
          process.exit(1);
        });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    // Only now: until a handler is installed a SIGTERM kills at once, and whoever read the
    // ready line may already have sent one.
    // pino's own `pid` is on every line already: a second one would repeat the key.
    logger.info({ event: 'ready' }, `${name} ready`);
  };
  main().catch((err: unknown) => {
    logger.fatal({ err }, err instanceof Error ? err.message : `${name} failed to start`);
    process.exit(1);
  });
}

/**
 * Node prints a process warning as plain text on stderr, several lines for some (the AWS SDK's
 * NodeVersionSupportWarning on Node < 22): that breaks a log of one JSON object a line. Its
 * own printer is replaced by one logger line each.
 */
function logWarnings(logger: Pick<RunServiceOptions['logger'], 'warn'>): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error & { code?: string }) => {
    // `warning`, not `name`: pino's `name` is the process's.
    logger.warn({ event: 'warning', warning: warning.name, code: warning.code }, warning.message);
  });
}
