// Reading a process's /metrics as Prometheus does: where it is served, and one metric's value.
import type { FleetProcess } from './fleet.js';

/** The `/metrics` URL a process logged (`metrics served`). */
export function metricsUrl(p: FleetProcess): string {
  const url = /"url":"(http:\/\/[^"]+\/metrics)"/.exec(p.output())?.[1];
  if (url === undefined) throw new Error(`${p.name} logged no metrics URL:\n${p.output()}`);
  return url;
}

/** The sum of a metric's samples in a scrape whose labels include `labels`. */
export function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(\{.*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`))) total += Number(m[3]);
  }
  return total;
}
