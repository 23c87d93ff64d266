/**
 * Rendering the Kustomize overlays with the real `kubectl kustomize` and checking each object
 * offline against the Kubernetes (and prometheus-operator) schemas of the `kubernetes-models`
 * packages. kubectl missing: the suites are skipped — unless `REPRISE_REQUIRE_KUBECTL=1` (set by
 * `.ci/run` when kubectl is there), where that fails instead.
 */
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as monitoringV1 from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import * as monitoringV1alpha1 from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1alpha1';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as rbacV1 from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import * as coreV1 from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** A rendered object, read loosely: tests say what they expect of each field. */
export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } } & Record<string, unknown>;

const REQUIRED = process.env['REPRISE_REQUIRE_KUBECTL'] === '1';

/** Whether kubectl (with its built-in kustomize) is here; throws when it is required and is not. */
export function kubectlAvailable(): boolean {
  const ok = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
  if (!ok && REQUIRED) throw new Error('REPRISE_REQUIRE_KUBECTL=1 but kubectl is not on PATH (it renders manifests/kubernetes with its built-in kustomize)');
  return ok;
}

/** `kubectl kustomize DIR` (relative to the repository) as objects. */
export function kustomize(dir: string): K8sObject[] {
  const out = spawnSync('kubectl', ['kustomize', resolve(root, dir)], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`kubectl kustomize ${dir} failed (exit ${out.status}): ${out.stderr}`);
  return parseYamlObjects(out.stdout, dir);
}

/** Every document of a multi-document YAML text, as objects. */
export function parseYamlObjects(text: string, what: string): K8sObject[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${what}: ${doc.errors[0]?.message}`);
    const value = doc.toJS() as K8sObject | null;
    return value === null ? [] : [value];
  });
}

type Model = new (data: unknown) => { validate(): void };

/** The model modules by apiVersion; an object of any other apiVersion fails validation (add its module here). */
const MODELS: Record<string, Record<string, unknown>> = {
  v1: coreV1,
  'apps/v1': appsV1,
  'networking.k8s.io/v1': networkingV1,
  'policy/v1': policyV1,
  'rbac.authorization.k8s.io/v1': rbacV1,
  'monitoring.coreos.com/v1': monitoringV1,
  'monitoring.coreos.com/v1alpha1': monitoringV1alpha1,
};

/**
 * Validates one object against its schema.
 * @throws naming the object and every schema error, or that no schema is known for its kind.
 */
export function validateObject(obj: K8sObject): void {
  const Model = MODELS[obj.apiVersion]?.[obj.kind] as Model | undefined;
  const id = `${obj.kind} ${obj.metadata?.name ?? '(no name)'} (${obj.apiVersion})`;
  if (typeof Model !== 'function') throw new Error(`${id}: no schema for this apiVersion/kind; add its kubernetes-models module to MODELS`);
  try {
    new Model(obj).validate();
  } catch (err) {
    throw new Error(`${id}: ${(err as Error).message}`, { cause: err });
  }
}

/** The one object of a kind and name; fails when there is none or several. */
export function one<T = K8sObject>(objects: readonly K8sObject[], kind: string, name: string): T {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name}, found ${found.length} (of ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')})`);
  return found[0] as T;
}

/** True when a matchLabels selector selects an object with these labels. */
export function selects(matchLabels: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  const wanted = Object.entries(matchLabels ?? {});
  return wanted.length > 0 && wanted.every(([k, v]) => labels?.[k] === v);
}
