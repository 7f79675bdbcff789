// What the bench's helper processes (spawned with `spawnTs`) share: importing nothing heavy.
/**
 * A bench helper process's end: says it is ready, and on SIGTERM closes its workers and
 * connection, then exits.
 */
export function readyUntilTerm(
  closers: readonly { close(): Promise<unknown> }[],
  connection: { quit(): Promise<unknown> },
): void {
  console.log(JSON.stringify({ event: 'ready' }));
  process.on('SIGTERM', () => {
    void Promise.all(closers.map((c) => c.close()))
      .then(() => connection.quit())
      .then(() => process.exit(0));
  });
}
