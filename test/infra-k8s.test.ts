import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, redisEndpoints, type SluiceConfig } from '@sluice/core';
import { FLEET_METRIC_NAMES } from '@sluice/ops';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IService } from 'kubernetes-models/v1/Service';
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { K8S_DIR, render, schemaProblems, unknownFields, type K8sObject } from './support/k8s.js';

// infra/k8s as a cluster would take it: each overlay rendered by kustomize and checked against
// the Kubernetes, KEDA and Prometheus Operator schemas (a planted bad field must fail that),
// then read as Sluice reads it: the config its pods load, the ports its probes and Services
// name, the drain inside the grace period, and what the autoscaler asks Prometheus for.
const OVERLAYS = readdirSync(join(K8S_DIR, 'overlays')).sort();
const rendered = new Map(OVERLAYS.map((o) => [o, render(join(K8S_DIR, 'overlays', o))]));
const dir = mkdtempSync(join(tmpdir(), 'sluice-k8s-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Kinds = {
  ConfigMap: IConfigMap;
  Deployment: IDeployment;
  HorizontalPodAutoscaler: IHorizontalPodAutoscaler;
  PodDisruptionBudget: IPodDisruptionBudget;
  ScaledObject: IScaledObject;
  Service: IService;
  ServiceMonitor: IServiceMonitor;
};
/** Every rendered object of `kind`, typed as its schema's interface. */
const all = <K extends keyof Kinds>(objects: readonly K8sObject[], kind: K): Kinds[K][] =>
  objects.filter((o) => o.kind === kind) as unknown as Kinds[K][];
/** The object of `kind` whose name starts with `name` (a generated ConfigMap's has a hash after it). */
function named<K extends keyof Kinds>(objects: readonly K8sObject[], kind: K, name: string): Kinds[K] {
  const found = all(objects, kind).find((o) => o.metadata!.name!.startsWith(name));
  if (!found) throw new Error(`no ${kind} ${name} in ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
}
const nameOf = (o: { metadata?: { name?: string } }): string => o.metadata!.name!;
const podSpec = (d: IDeployment) => d.spec!.template.spec!;
const containerOf = (d: IDeployment): IContainer => podSpec(d).containers[0]!;
const portOf = (c: IContainer, name: unknown): number | undefined =>
  c.ports?.find((p) => p.name === name)?.containerPort;
const selects = (selector: Record<string, string> | undefined, d: IDeployment): boolean =>
  Object.entries(selector ?? {}).every(([k, v]) => d.spec!.template.metadata!.labels![k] === v);
/** Sets a field the schema's type would refuse, as a careless edit would. */
const plant = (target: object, field: string, value: unknown): void => void Object.assign(target, { [field]: value });

/** The config a pod of the overlay loads: the ConfigMap's file, its env ConfigMap, and a Secret's keys. */
function podConfig(overlay: string, objects: readonly K8sObject[]): SluiceConfig {
  const deployment = all(objects, 'Deployment')[0]!;
  const container = containerOf(deployment);
  const file = join(dir, `${overlay}.yaml`);
  const volume = podSpec(deployment).volumes!.find((v) => v.configMap)!;
  writeFileSync(file, named(objects, 'ConfigMap', volume.configMap!.name!).data!['sluice.yaml']!);
  const env: Record<string, string> = {
    // What `sluice-secrets` holds (docs/operations/kubernetes.md).
    REDIS_PASSWORD: 'from-the-secret',
    SLUICE_ADMIN_TOKENS: `ops:${randomBytes(32).toString('base64')}`,
  };
  for (const from of container.envFrom!) {
    if (from.configMapRef) Object.assign(env, named(objects, 'ConfigMap', from.configMapRef.name!).data);
  }
  for (const e of container.env!) env[e.name] = e.value!;
  expect(env.SLUICE_CONFIG).toBe('/etc/sluice/sluice.yaml');
  return loadConfig({ path: file, env });
}

describe('infra/k8s', () => {
  it('has an overlay for one Redis, for a Redis Cluster, and for an HPA on CPU', () => {
    expect(OVERLAYS).toEqual(['cluster', 'cpu-autoscaling', 'one-redis']);
  });

  it.each(OVERLAYS)(
    '%s renders and validates against the Kubernetes, KEDA and Prometheus Operator schemas',
    async (o) => {
      const objects = rendered.get(o)!;
      expect(objects.map((x) => x.kind)).toEqual(
        expect.arrayContaining(['Deployment', 'Service', 'PodDisruptionBudget']),
      );
      expect(await schemaProblems(objects)).toEqual([]);
      expect(unknownFields(objects)).toEqual([]);
    },
  );

  it('fails on a planted invalid field: a wrong type, or a name the schema does not know', async () => {
    const objects = structuredClone(rendered.get('one-redis')!);
    plant(named(objects, 'Deployment', 'sluice-worker').spec!, 'replicas', 'two');
    plant(named(objects, 'ScaledObject', 'sluice-worker').spec.triggers[0]!.metadata, 'ignoreNullValues', false);
    expect(await schemaProblems(objects)).toEqual([
      expect.stringMatching(/^Deployment\/sluice-worker: .*spec\/replicas must be integer/),
      expect.stringMatching(/^ScaledObject\/sluice-worker: .*ignoreNullValues must be string/),
    ]);
    const typo = structuredClone(rendered.get('one-redis')!);
    plant(containerOf(named(typo, 'Deployment', 'sluice-worker')), 'readinessProbee', {});
    plant(named(typo, 'ScaledObject', 'sluice-worker').spec, 'fallbak', { replicas: 4 });
    expect(await schemaProblems(typo)).toEqual([]);
    expect(unknownFields(typo)).toEqual([
      expect.stringMatching(/^Deployment\/sluice-worker: .*'"readinessProbee"' does not exist in type 'IContainer'/),
      expect.stringMatching(/^ScaledObject\/sluice-worker: .*'"fallbak"' does not exist/),
    ]);
  });

  it.each(OVERLAYS)('%s: its pods load their config, and probes, ports and Services agree with it', (o) => {
    const objects = rendered.get(o)!;
    const config = podConfig(o, objects);
    const endpoints = redisEndpoints(config);
    if (o === 'cluster') {
      expect(endpoints.queues).toMatchObject({ kind: 'cluster' });
      expect((endpoints.queues as { seeds: string[] }).seeds.every((s) => s.includes(':from-the-secret@'))).toBe(true);
      expect(endpoints.limiter).toMatchObject({ kind: 'node' });
      expect(config.redis.dispatchPartitions).toBeGreaterThan(1);
    } else {
      expect(endpoints.queues).toEqual({ kind: 'node', url: 'redis://:from-the-secret@redis:6379' });
    }
    // Probes reach the pod's address, not its loopback.
    expect(config.health.host).toBe('0.0.0.0');
    expect(config.metrics.host).toBe('0.0.0.0');
    const deployments = all(objects, 'Deployment');
    expect(deployments.map(nameOf).sort()).toEqual(['sluice-admin', 'sluice-api', 'sluice-scheduler', 'sluice-worker']);
    for (const d of deployments) {
      const name = nameOf(d);
      const c = containerOf(d);
      expect(c.command!.join(' '), name).toBe(`node apps/${name.slice('sluice-'.length)}/dist/main.js`);
      expect(portOf(c, 'health'), name).toBe(config.health.port);
      expect(c.readinessProbe!.httpGet).toEqual({ path: '/readyz', port: 'health' });
      expect(c.livenessProbe!.httpGet).toEqual({ path: '/healthz', port: 'health' });
      expect(c.resources!.requests!.cpu, name).toBeDefined();
      expect(c.resources!.requests!.memory, name).toBeDefined();
      expect(c.envFrom).toContainEqual({ secretRef: { name: 'sluice-secrets' } });
      // No credential sits in a manifest: every secret comes from the Secret.
      expect(JSON.stringify(c.env)).not.toMatch(/PASSWORD|TOKEN|KEY/);
      if (name !== 'sluice-admin') expect(portOf(c, 'metrics')).toBe(config.metrics.port);
      if (name === 'sluice-api') expect(portOf(c, 'http')).toBe(config.api.port);
      if (name === 'sluice-admin') expect(portOf(c, 'http')).toBe(config.admin.port);
    }
    // Every Service and budget selects the pods of one Deployment, by a port the pods name.
    for (const s of all(objects, 'Service')) {
      const d = deployments.find((x) => selects(s.spec!.selector, x));
      expect(d, nameOf(s)).toBeDefined();
      for (const p of s.spec!.ports!) expect(portOf(containerOf(d!), p.targetPort)).toBe(p.port);
    }
    for (const b of all(objects, 'PodDisruptionBudget')) {
      const selected = deployments.filter((x) => selects(b.spec!.selector!.matchLabels, x));
      expect(selected.map(nameOf)).toEqual([nameOf(b)]);
      expect(selected[0]!.spec!.replicas).toBeGreaterThan(b.spec!.minAvailable as number);
    }
    const monitor = named(objects, 'ServiceMonitor', 'sluice');
    const scraped = all(objects, 'Service').filter(
      (s) =>
        Object.entries(monitor.spec.selector.matchLabels ?? {}).every(([k, v]) => s.metadata!.labels?.[k] === v) &&
        s.spec!.ports!.some((p) => p.name === monitor.spec.endpoints[0]!.port),
    );
    expect(scraped.map(nameOf).sort()).toEqual(['sluice-api', 'sluice-scheduler', 'sluice-worker']);
  });

  it.each(OVERLAYS)('%s: SIGTERM drains within the grace period, preStop counted', (o) => {
    const objects = rendered.get(o)!;
    const config = podConfig(o, objects);
    // What each process allows itself to stop (apps/*/src/main.ts), before it exits anyway.
    const deadlineMs: Record<string, number> = {
      'sluice-worker': config.worker.drainTimeoutMs + 5_000,
      'sluice-scheduler': config.worker.lockDurationMs + 5_000,
      'sluice-api': 10_000,
      'sluice-admin': 10_000,
    };
    for (const d of all(objects, 'Deployment')) {
      const preStopMs = (containerOf(d).lifecycle?.preStop?.sleep?.seconds ?? 0) * 1000;
      const graceMs = (podSpec(d).terminationGracePeriodSeconds ?? 30) * 1000;
      expect(preStopMs + deadlineMs[nameOf(d)]!, nameOf(d)).toBeLessThan(graceMs);
    }
    // The worker's sends in flight get the drain, well inside the grace: none cut and run twice.
    expect(containerOf(named(objects, 'Deployment', 'sluice-worker')).lifecycle).toBeUndefined();
    expect(config.worker.drainTimeoutMs).toBeLessThanOrEqual(20_000);
  });

  it.each(OVERLAYS)('%s: workers scale on admissible work with KEDA, or on CPU with an HPA, never to 0', (o) => {
    const objects = rendered.get(o)!;
    const keda = all(objects, 'ScaledObject');
    const hpa = all(objects, 'HorizontalPodAutoscaler');
    expect(keda.length + hpa.length).toBe(1);
    if (o === 'cpu-autoscaling') {
      const spec = hpa[0]!.spec;
      expect(spec.scaleTargetRef.name).toBe('sluice-worker');
      expect(spec.minReplicas).toBeGreaterThanOrEqual(1);
      expect(spec.metrics![0]!.resource!.name).toBe('cpu');
      return;
    }
    const scaler = keda[0]!;
    expect(scaler.spec.scaleTargetRef.name).toBe('sluice-worker');
    expect(scaler.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(scaler.spec.fallback!.replicas).toBeGreaterThanOrEqual(1);
    // One Prometheus trigger (no CPU trigger beside the fallback), an empty answer an error.
    expect(scaler.spec.triggers).toHaveLength(1);
    const { type, metadata } = scaler.spec.triggers[0]!;
    expect(type).toBe('prometheus');
    expect(metadata.ignoreNullValues).toBe('false');
    const metric = /^sum\((\w+)\{namespace="([^"]+)"\}\)$/.exec(metadata.query ?? '');
    expect(metric?.[1]).toBe('sluice_admissible_work');
    expect(FLEET_METRIC_NAMES).toContain(metric?.[1]);
    expect(metric?.[2]).toBe(scaler.metadata!.namespace);
  });
});
