import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/load-config.js';
import { parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Shipped examples must stay valid as the schema and parser change. */
describe('manifests', () => {
  it('the Kubernetes config file passes the config schema', () => {
    const config = loadConfig({ file: resolve(root, 'manifests/kubernetes/reprise.yaml'), env: {}, cwd: root });
    expect(config.store.data_dir).toBe('/data');
    expect(config.catalog.dir).toBe('/app/catalog');
  });

  it('the sample Alertmanager payloads parse into one firing and one resolved incident of the same alert', () => {
    const read = (f: string) => parseAlertmanagerPayload(JSON.parse(readFileSync(resolve(root, 'manifests/alertmanager', f), 'utf8'))).incidents;
    const [firing] = read('sample-firing.json');
    const [resolved] = read('sample-resolved.json');
    expect(firing?.status).toBe('firing');
    expect(resolved?.status).toBe('resolved');
    expect(resolved?.fingerprint).toBe(firing?.fingerprint);
    expect(firing?.triggerKey).toBe('kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1');
  });

  it('the Alertmanager receiver example sends resolves to the webhook path', () => {
    const doc = parse(readFileSync(resolve(root, 'manifests/alertmanager/receiver.yaml'), 'utf8')) as {
      receivers: Array<{ webhook_configs: Array<{ url: string; send_resolved: boolean }> }>;
    };
    const hook = doc.receivers[0]?.webhook_configs[0];
    expect(hook?.send_resolved).toBe(true);
    expect(hook?.url).toMatch(/\/webhook\/alertmanager$/);
  });
});
