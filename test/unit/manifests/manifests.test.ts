import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { IAlertmanagerConfig } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1alpha1';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/load-config.js';
import { parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';
import { root, validateObject, type K8sObject } from './k8s-objects.js';

const read = (path: string) => readFileSync(resolve(root, path), 'utf8');

/** Where the Service `reprise` answers inside the cluster, from the manifests themselves. */
function botServiceUrl(): string {
  const ns = (parse(read('manifests/kubernetes/base/kustomization.yaml')) as { namespace: string }).namespace;
  const svc = parse(read('manifests/kubernetes/base/service.yaml')) as { metadata: { name: string }; spec: { ports: Array<{ name: string; port: number }> } };
  const port = svc.spec.ports.find((p) => p.name === 'http')?.port;
  return `http://${svc.metadata.name}.${ns}.svc:${port}/webhook/alertmanager`;
}

/** Shipped examples must stay valid as the schema and parser change. */
describe('manifests', () => {
  it('the Kubernetes config file passes the config schema as it is (no env)', () => {
    const config = loadConfig({ file: resolve(root, 'manifests/kubernetes/base/reprise.yaml'), env: {}, cwd: root });
    expect(config.store.data_dir).toBe('/data');
    expect(config.catalog.dir).toBe('/app/catalog');
    expect(config.model).toBeUndefined();
    expect(config.tools.confirm.every((t) => config.tools.allow.includes(t))).toBe(true);
  });

  it('the sample Alertmanager payloads parse into one firing and one resolved incident of the same alert', () => {
    const parsed = (f: string) => parseAlertmanagerPayload(JSON.parse(read(`manifests/alertmanager/${f}`))).incidents;
    const [firing] = parsed('sample-firing.json');
    const [resolved] = parsed('sample-resolved.json');
    expect(firing?.status).toBe('firing');
    expect(resolved?.status).toBe('resolved');
    expect(resolved?.fingerprint).toBe(firing?.fingerprint);
    expect(firing?.triggerKey).toBe('kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1');
  });
});

describe('manifests/alertmanager', () => {
  type Hook = { url: string; send_resolved: boolean; http_config?: { authorization?: { type: string; credentials_file?: string } } };
  type AmConfig = { route: { receiver: string; routes?: Array<{ receiver: string; continue?: boolean }> }; receivers: Array<{ name: string; webhook_configs?: Hook[] }> };
  const am = parse(read('manifests/alertmanager/receiver.yaml')) as AmConfig;

  it('receiver.yaml sends firing and resolved alerts to the bot Service with the bearer token from reprise-secrets', () => {
    const hooks = am.receivers.find((r) => r.name === 'reprise')?.webhook_configs ?? [];
    expect(hooks).toHaveLength(1);
    expect(hooks[0]?.send_resolved).toBe(true);
    expect(hooks[0]?.url).toBe(botServiceUrl());
    expect(hooks[0]?.http_config?.authorization?.type).toBe('Bearer');
    // Where the prometheus-operator mounts `spec.secrets: [reprise-secrets]`; the key the bot reads.
    expect(hooks[0]?.http_config?.authorization?.credentials_file).toBe('/etc/alertmanager/secrets/reprise-secrets/bearer-token');
    // Reprise sees every alert and the operator's own routing goes on after it.
    expect(am.route.routes?.[0]).toEqual({ receiver: 'reprise', continue: true });
  });

  const amtool = spawnSync('amtool', ['--version']).status === 0;
  it.runIf(amtool)('receiver.yaml is a config Alertmanager accepts (amtool check-config)', () => {
    const out = spawnSync('amtool', ['check-config', resolve(root, 'manifests/alertmanager/receiver.yaml')], { encoding: 'utf8' });
    expect(out.status, out.stdout + out.stderr).toBe(0);
    expect(out.stdout).toMatch(/SUCCESS/);
  });

  it('alertmanager-config.yaml is a valid AlertmanagerConfig with the same receiver, token from the Secret', () => {
    const doc = parse(read('manifests/alertmanager/alertmanager-config.yaml')) as IAlertmanagerConfig;
    validateObject(doc as unknown as K8sObject);
    const hook = doc.spec?.receivers?.find((r) => r.name === 'reprise')?.webhookConfigs?.[0];
    expect(doc.spec?.route?.receiver).toBe('reprise');
    expect(hook?.sendResolved).toBe(true);
    expect(hook?.url).toBe(botServiceUrl());
    expect(hook?.httpConfig?.authorization).toEqual({ type: 'Bearer', credentials: { name: 'reprise-secrets', key: 'bearer-token' } });
  });

  it('the schema check catches a broken AlertmanagerConfig', () => {
    const doc = parse(read('manifests/alertmanager/alertmanager-config.yaml')) as { spec: { receivers: Array<{ webhookConfigs: Array<{ sendResolved: unknown }> }> } };
    const hook = doc.spec.receivers[0]?.webhookConfigs[0];
    if (hook) hook.sendResolved = 'yes';
    expect(() => validateObject(doc as unknown as K8sObject)).toThrow(/sendResolved/);
  });
});
