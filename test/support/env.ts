// The one place tests read the environment (lint allows process.env only in the config
// loader, the apps' main.ts, scripts/ and test/support/).

/** The environment a test's child process starts from, with `overrides` on top. */
export function childEnv(overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...overrides };
}

/** The environment's PATH, for a test that puts stubs in front of it. */
export function envPath(): string {
  return process.env.PATH ?? '';
}

/** The Chromium the browser test drives: `SLUICE_CHROMIUM`, else Debian's. */
export function chromiumPath(): string {
  return process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';
}

/** The promtool the metrics test checks every `/metrics` with: `SLUICE_PROMTOOL`, else Debian's. */
export function promtoolPath(): string {
  return process.env.SLUICE_PROMTOOL ?? '/usr/bin/promtool';
}

/** Whether the bench profiles Redis time by script (`SLUICE_BENCH_SCRIPTS=1`; test/bench/scripts-by-name.ts). */
export function benchProfilesScripts(): boolean {
  return process.env.SLUICE_BENCH_SCRIPTS === '1';
}
