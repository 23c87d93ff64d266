/**
 * Identity for every kind of alert (issue 19 item 1): hosts, scrape jobs, Grafana rules,
 * PagerDuty services and a team's own labels each keep their own trigger key; Kubernetes keys
 * are the ones the previous identity gave (held to a fixture it wrote).
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';
import { deriveIdentity, HOST_LABELS, reduceHost, triggerKey } from '../../../src/core/identity.js';
import { parsePagerDutyPayload } from '../../../src/core/pagerduty.js';
import type { Workload } from '../../../src/core/types.js';

const key = (labels: Record<string, string>, identityLabels: string[] = []): string =>
  deriveIdentity(labels['alertname'] ?? '', labels, { labels: identityLabels }).triggerKey;

describe('reduceHost', () => {
  it.each([
    ['node1:9100', 'node1'],
    ['node1', 'node1'],
    ['10.0.3.17:9100', '10.0.3.17'],
    ['node1.example.com:9100', 'node1.example.com'],
    ['[2001:db8::1]:9100', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['2001:db8::1', '2001:db8::1'],
    ['https://api.example.com:8443/health?x=1', 'api.example.com'],
    ['http://[::1]:8080/metrics', '::1'],
    ['tcp://db.internal:5432', 'db.internal'],
    ['api.example.com/health', 'api.example.com'],
    ['user@bastion:22', 'bastion'],
    ['node1.', 'node1'],
  ])('%s → %s', (raw, host) => {
    expect(reduceHost(raw)).toBe(host);
  });
  it.each([[''], ['   '], [':9100'], ['http://'], ['a b'], ['<script>'], ['x'.repeat(300)]])('%j has no host', (raw) => {
    expect(reduceHost(raw)).toBeUndefined();
  });
});

describe('hosts', () => {
  const node = (instance: string, extra: Record<string, string> = {}) => ({
    alertname: 'NodeFilesystemSpaceFillingUp',
    instance,
    job: 'node',
    mountpoint: '/',
    ...extra,
  });

  it('two hosts are two triggers; two exporters of one host are one', () => {
    expect(key(node('node1:9100'))).toBe('nodefilesystemspacefillingup||host|node1|');
    expect(key(node('node2:9100'))).toBe('nodefilesystemspacefillingup||host|node2|');
    expect(key(node('node1:9100'))).toBe(key(node('node1:9200')));
    expect(key(node('https://node1:443/probe'))).toBe(key(node('node1:9100')));
  });

  it('reads instance, then host, hostname, nodename, and says which label it used', () => {
    const id = deriveIdentity('X', { alertname: 'X', host: 'web-1', hostname: 'web-1.lan', nodename: 'n', cluster: 'dc1' });
    expect(id).toMatchObject({ basis: 'host', labels: ['host', 'cluster'], workload: { namespace: '', name: 'web-1', kind: 'host', cluster: 'dc1' } });
    expect(key({ alertname: 'X', hostname: 'web-2' })).toBe('x||host|web-2|');
    expect(key({ alertname: 'X', nodename: 'web-3' })).toBe('x||host|web-3|');
    expect(key({ alertname: 'X', instance: '[2001:db8::7]:9100' })).toBe('x||host|2001:db8::7|');
  });

  it('keeps the namespace of an exporter in a cluster, so hosts split inside it', () => {
    const a = deriveIdentity('RedisDown', { alertname: 'RedisDown', instance: '10.0.3.17:9121', namespace: 'storefront', cluster: 'prod' });
    expect(a.triggerKey).toBe('redisdown|storefront|host|10.0.3.17|prod');
    expect(a.labels).toEqual(['instance', 'namespace', 'cluster']);
    expect(key({ alertname: 'RedisDown', instance: '10.0.3.18:9121', namespace: 'storefront', cluster: 'prod' })).not.toBe(a.triggerKey);
  });

  it('reads a node-exporter pod (a DaemonSet scraping its own machine) as the machine, in kube-prometheus and its Helm chart', () => {
    const base = { alertname: 'NodeFilesystemSpaceFillingUp', namespace: 'monitoring', container: 'node-exporter', mountpoint: '/' };
    const w1 = { ...base, pod: 'node-exporter-x2k4q', job: 'node-exporter', service: 'node-exporter', instance: 'worker-1' };
    const w2 = { ...base, pod: 'node-exporter-zz9vt', job: 'node-exporter', service: 'node-exporter', instance: 'worker-2' };
    expect(key(w1)).toBe('nodefilesystemspacefillingup|monitoring|host|worker-1|');
    expect(key(w2)).toBe('nodefilesystemspacefillingup|monitoring|host|worker-2|');
    expect(deriveIdentity(base.alertname, w1).labels).toEqual(['instance', 'pod', 'namespace']);
    const helm = { ...base, pod: 'kps-prometheus-node-exporter-x2k4q', job: 'node-exporter', instance: '10.0.1.5:9100' };
    expect(key(helm)).toBe('nodefilesystemspacefillingup|monitoring|host|10.0.1.5|');
    // With a `node` label, the node it names (the key KubeNodeNotReady has).
    expect(key({ ...w1, node: 'ip-10-0-1-5' })).toBe('nodefilesystemspacefillingup||node|ip-10-0-1-5|');
    // kube-state-metrics reporting on that DaemonSet's pod: the DaemonSet, as before.
    expect(key({ ...w1, job: 'kube-state-metrics', service: 'kube-state-metrics', alertname: 'KubePodCrashLooping' })).toBe(
      'kubepodcrashlooping|monitoring|daemonset|node-exporter|',
    );
  });

  it('a namespaced Kubernetes object outranks the host it was scraped from', () => {
    expect(key({ alertname: 'CiliumAgentEndpointFailures', instance: '10.0.3.17:9962', namespace: 'kube-system', pod: 'orders-7d9f8c6b5-732b1' })).toBe(
      'ciliumagentendpointfailures|kube-system|deployment|orders|',
    );
    expect(key({ alertname: 'TargetDown', job: 'orders', namespace: 'shop', service: 'orders', instance: '10.1.1.1:8080' })).toBe(
      'targetdown|shop|service|orders|',
    );
    // Outside a namespace, `service` is a plain label: the host is finer.
    expect(key({ alertname: 'HighLatency', service: 'checkout', instance: 'web1:8080' })).toBe('highlatency||host|web1|');
  });
});

describe('scrape job, service, Grafana rules, PagerDuty services', () => {
  it('falls back to the scrape job, then nothing but the cluster', () => {
    const id = deriveIdentity('AlertmanagerClusterDown', { alertname: 'AlertmanagerClusterDown', job: 'alertmanager-main', cluster: 'prod-eu-1' });
    expect(id).toMatchObject({
      basis: 'scrape_job',
      labels: ['job', 'cluster'],
      triggerKey: 'alertmanagerclusterdown||scrape_job|alertmanager-main|prod-eu-1',
    });
    // A scrape job is not something the alert runs on: recall sees no workload (scopeless), as before.
    expect(id.workload).toBeUndefined();
    expect(key({ alertname: 'KubeletDown', job: 'kubelet' })).not.toBe(key({ alertname: 'KubeletDown', job: 'kubelet', cluster: 'staging' }));
    expect(key({ alertname: 'Watchdog' })).toBe('watchdog||||');
    expect(deriveIdentity('Watchdog', { alertname: 'Watchdog' })).toMatchObject({ basis: 'none', labels: [] });
  });

  it('keeps the namespace as what recall compares when the scrape job is the identity', () => {
    const id = deriveIdentity('EtcdNoLeader', { alertname: 'EtcdNoLeader', job: 'etcd', namespace: 'kube-system' });
    expect(id.triggerKey).toBe('etcdnoleader|kube-system|scrape_job|etcd|');
    expect(id.workload).toEqual({ namespace: 'kube-system', name: '' });
  });

  it('tells two Grafana rules with one alertname apart: rulename + folder, else the rule uid', () => {
    const nodata = (rulename: string, folder: string) => ({ alertname: 'DatasourceNoData', rulename, grafana_folder: folder, datasource_uid: 'p1' });
    const orders = deriveIdentity('DatasourceNoData', nodata('Orders per minute', 'Shop'));
    expect(orders).toMatchObject({ basis: 'grafana_rule', labels: ['grafana_folder', 'rulename'] });
    expect(orders.triggerKey).toBe('datasourcenodata||grafana_rule|shop/orders per minute|');
    expect(key(nodata('Logins per minute', 'Shop'))).not.toBe(orders.triggerKey);
    expect(key(nodata('Orders per minute', 'Other'))).not.toBe(orders.triggerKey);
    expect(key({ alertname: 'High CPU', grafana_folder: 'A' })).not.toBe(key({ alertname: 'High CPU', grafana_folder: 'B' }));
    expect(key({ alertname: 'High CPU', __alert_rule_uid__: 'abc' })).toBe('high cpu||grafana_rule|abc|');
    expect(key({ alertname: 'High CPU', __alert_rule_uid__: 'abc' })).not.toBe(key({ alertname: 'High CPU', __alert_rule_uid__: 'def' }));
  });

  it('adds the Grafana rulename to a finer identity, so DatasourceError on one pod stays per rule', () => {
    const a = key({ alertname: 'DatasourceError', rulename: 'Pod restarts', namespace: 'shop', pod: 'web-7d9f8c6b5-x2k4q' });
    const b = key({ alertname: 'DatasourceError', rulename: 'Pod memory', namespace: 'shop', pod: 'web-7d9f8c6b5-x2k4q' });
    expect(a).toBe('datasourceerror|shop|deployment|web|||rulename=pod restarts');
    expect(a).not.toBe(b);
  });

  it('a Grafana alert about a Kubernetes workload keeps the Kubernetes key (the folder adds nothing finer)', () => {
    expect(key({ alertname: 'KubePodCrashLooping', grafana_folder: 'Kubernetes', namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q' })).toBe(
      'kubepodcrashlooping|payments|deployment|checkout-api|',
    );
  });

  it('identifies a PagerDuty incident by its service id, and shows the service name as its workload', () => {
    const body = JSON.parse(readFileSync(new URL('../../fixtures/sources/pagerduty-incident-triggered.json', import.meta.url), 'utf8'));
    const p = parsePagerDutyPayload(body);
    if (p.kind !== 'incident') throw new Error('expected an incident');
    expect(p.incident.triggerKey).toBe('checkout-api pods crash looping in payments||pagerduty_service|pf9kmxh|');
    expect(p.incident.identity).toEqual({ basis: 'pagerduty_service', labels: ['pagerduty_service'] });
    expect(p.incident.workload).toEqual({ namespace: '', name: 'checkout-api', kind: 'service' });
    const renamed = structuredClone(body);
    renamed.event.data.service.summary = 'checkout';
    const q = parsePagerDutyPayload(renamed);
    expect(q.kind === 'incident' && q.incident.triggerKey).toBe(p.incident.triggerKey);
    const other = structuredClone(body);
    other.event.data.service.id = 'PZZZZZZ';
    const r = parsePagerDutyPayload(other);
    expect(r.kind === 'incident' && r.incident.triggerKey).not.toBe(p.incident.triggerKey);
  });
});

describe('identity.labels: a team’s own identifying labels', () => {
  const alert = { alertname: 'HighErrorRate', namespace: 'shop', deployment: 'api', env: 'prod', component: 'checkout' };
  it('appends them in name order after the account slot, only when the alert carries them', () => {
    expect(key(alert, ['env', 'component'])).toBe('higherrorrate|shop|deployment|api|||component=checkout|env=prod');
    expect(key(alert, ['component', 'env'])).toBe(key(alert, ['env', 'component']));
    expect(key({ ...alert, env: 'staging' }, ['env'])).not.toBe(key(alert, ['env']));
    // Not configured, or not on the alert: the key is the plain one.
    expect(key(alert)).toBe('higherrorrate|shop|deployment|api|');
    expect(key(alert, ['team'])).toBe('higherrorrate|shop|deployment|api|');
    expect(deriveIdentity('HighErrorRate', alert, { labels: ['env', 'namespace', 'alertname'] }).labels).toEqual(['deployment', 'namespace', 'env']);
  });
  it('keeps an account in its own slot, so a qualifier never reads as an account', () => {
    const rds = { alertname: 'RdsDown', arn: 'arn:aws:rds:eu-west-1:123456789012:db:orders', env: 'prod' };
    expect(key(rds, ['env'])).toBe('rdsdown||rds:db|orders||123456789012|env=prod');
  });
  it('escapes separators inside values', () => {
    expect(key({ alertname: 'A', instance: 'h', env: 'a|b' }, ['env'])).toBe('a||host|h|||env=a%7cb');
  });
});

describe('the rules every key keeps', () => {
  const names = ['namespace', 'pod', 'deployment', 'instance', 'host', 'job', 'service', 'cluster', 'rulename', 'grafana_folder', 'env', 'node'] as const;
  const value = fc.stringMatching(/^[a-z0-9][a-z0-9.:-]{0,11}$/);
  const labelSets = fc.dictionary(fc.constantFrom(...names), value, { minKeys: 1 });

  it('the same alert re-sent, labels in any order, always gets the same key', () => {
    fc.assert(
      fc.property(labelSets, (labels) => {
        const reversed = Object.fromEntries(Object.entries(labels).reverse());
        expect(key({ alertname: 'A', ...reversed }, ['env'])).toBe(key({ alertname: 'A', ...labels }, ['env']));
      }),
    );
  });

  it('reads the labels the documented precedence names: the first target present, then namespace, cluster, rulename, identity.labels', () => {
    const order = ['deployment', 'pod', 'node', 'service (namespaced)', 'instance', 'host', 'service', 'job', 'grafana_folder', 'rulename'];
    fc.assert(
      fc.property(labelSets, (labels) => {
        const full: Record<string, string> = { alertname: 'A', ...labels };
        const id = deriveIdentity('A', full, { labels: ['env'] });
        const present = (l: string): boolean =>
          l === 'service (namespaced)'
            ? full['service'] !== undefined && full['namespace'] !== undefined
            : (HOST_LABELS as readonly string[]).includes(l)
              ? reduceHost(full[l] ?? '') !== undefined
              : full[l] !== undefined;
        const first = order.find(present);
        const exporter = full['pod'] !== undefined && id.labels.includes('pod') && id.labels[0] !== 'pod';
        if (!exporter && first !== undefined) expect(id.labels[0]).toBe(first?.replace(' (namespaced)', ''));
        for (const always of ['cluster', 'rulename', 'env']) if (full[always] !== undefined) expect(id.labels).toContain(always);
        if (full['namespace'] !== undefined && id.workload?.kind !== 'node') expect(id.labels).toContain('namespace');
      }),
    );
  });

  it('two alerts that differ in an identifying label never share a key', () => {
    fc.assert(
      fc.property(labelSets, value, (labels, other) => {
        const full: Record<string, string> = { alertname: 'A', ...labels };
        const id = deriveIdentity('A', full, { labels: ['env'] });
        for (const name of id.labels) {
          const changed = { ...full, [name]: `${full[name] ?? ''}x${other}` };
          // Another port of the same host is the same host.
          const before = full[name] ?? '';
          if ((HOST_LABELS as readonly string[]).includes(name) && reduceHost(before) === reduceHost(changed[name] ?? '')) continue;
          expect(deriveIdentity('A', changed, { labels: ['env'] }).triggerKey, `changing ${name}`).not.toBe(id.triggerKey);
        }
      }),
    );
  });
});

interface V1Key {
  from: string;
  labels: Record<string, string>;
  key: string;
  workload: Workload | null;
  pagerduty?: boolean;
}

/** What the previous identity (store schema v1, main @ eb525b6) gave these labels; see make-v1-keys.mjs. */
const v1: V1Key[] = JSON.parse(readFileSync(new URL('../../fixtures/identity/v1-keys.json', import.meta.url), 'utf8'));
const KUBERNETES_KINDS = new Set([
  'deployment',
  'statefulset',
  'daemonset',
  'job',
  'cronjob',
  'pod',
  'persistentvolumeclaim',
  'horizontalpodautoscaler',
  'persistentvolume',
  'node',
  'service',
]);
const HOSTISH = ['instance', 'host', 'hostname', 'nodename', 'job', 'rulename', 'grafana_folder', '__alert_rule_uid__'];

describe('Kubernetes keys do not change (held to the keys the previous identity wrote)', () => {
  const parse = (labels: Record<string, string>) =>
    parseAlertmanagerPayload({ alerts: [{ status: 'firing', labels, startsAt: '2026-01-01T00:00:00Z' }] }).incidents[0]!;
  const kubernetes = v1.filter(
    (r) => !r.pagerduty && r.workload?.kind !== undefined && (KUBERNETES_KINDS.has(r.workload.kind) || r.workload.kind.includes(':') || r.workload.account),
  );
  const namespaceOnly = v1.filter((r) => !r.pagerduty && r.workload && r.workload.kind === undefined);

  it('the fixture covers every Kubernetes kind and cloud resources', () => {
    expect(new Set(kubernetes.map((r) => r.workload?.kind))).toEqual(new Set([...KUBERNETES_KINDS].filter((k) => k !== 'pod').concat(['rds:db', 'sqs'])));
    expect(kubernetes.length).toBeGreaterThan(50);
  });

  it('every alert about a Kubernetes object or a cloud resource keeps its key and its workload', () => {
    const changed = kubernetes
      .map((r) => ({ r, now: parse(r.labels) }))
      .filter(({ r, now }) => now.triggerKey !== r.key && !isHostExporter(r.labels))
      .map(({ r, now }) => `${r.key} → ${now.triggerKey}`);
    expect(changed).toEqual([]);
    for (const r of kubernetes) if (!isHostExporter(r.labels)) expect(parse(r.labels).workload, r.key).toEqual(r.workload);
  });

  it('a namespace-scoped alert keeps its key unless it names something finer (a host, a scrape job, a rule)', () => {
    for (const r of namespaceOnly) {
      const now = parse(r.labels);
      if (HOSTISH.some((l) => r.labels[l])) {
        expect(now.triggerKey, r.key).not.toBe(r.key);
        expect(now.triggerKey.startsWith(r.key.split('|').slice(0, 2).join('|')), r.key).toBe(true);
      } else expect(now.triggerKey).toBe(r.key);
    }
    expect(namespaceOnly.filter((r) => HOSTISH.some((l) => r.labels[l])).length).toBeGreaterThan(20);
    expect(namespaceOnly.filter((r) => !HOSTISH.some((l) => r.labels[l])).length).toBeGreaterThan(3);
  });
});

/** The one deliberate change to a pod-derived key: a node-exporter-style DaemonSet scraping its host. */
function isHostExporter(labels: Record<string, string>): boolean {
  return deriveIdentity('x', labels).basis === 'host' && labels['pod'] !== undefined;
}

describe('triggerKey of a bare workload (callers without labels)', () => {
  it('is the Kubernetes form, as before', () => {
    expect(triggerKey('KubePodCrashLooping', { namespace: 'shop', name: 'web', kind: 'deployment', cluster: 'prod' })).toBe(
      'kubepodcrashlooping|shop|deployment|web|prod',
    );
  });
});
