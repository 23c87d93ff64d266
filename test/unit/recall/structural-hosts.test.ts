/**
 * Catalog entries that target a host (issue 19 item 1): `resource: host/node1` (or the alert's
 * own label names) agrees exactly with alerts about that machine — a host or the Kubernetes node
 * it is — and never with another host or a workload that shares its name.
 */
import { describe, expect, it } from 'vitest';
import { parseResourceRef } from '../../../src/core/catalog/resource-ref.js';
import { catalogResource } from '../../../src/core/curate/plan-curation.js';
import { recall } from '../../../src/core/recall/recall.js';
import { describe as describeWorkload, structuralGate } from '../../../src/core/recall/structural.js';
import type { Incident } from '../../../src/core/types.js';
import { NOW, alert, servedSnapshot, incidentEntry, noHistory, playbook, recallOpts } from './recall-fixtures.js';

const descriptive = { opaque: false };
const disk = (labels: Record<string, string>): Incident =>
  alert({
    alertname: 'NodeFilesystemSpaceFillingUp',
    labels: { job: 'node', mountpoint: '/', ...labels },
    annotations: { summary: 'Filesystem is predicted to run out of space.' },
  });
const node1Entry = incidentEntry('incidents/node1-var-log.md', {
  resource: 'host/node1',
  title: 'node1 root filesystem filling up: journald logs',
  symptom: 'NodeFilesystemSpaceFillingUp on node1: the filesystem is predicted to run out of space.',
  cause: 'journald kept 40 GiB of logs on node1 after the retention setting was lost.',
});

describe('resource: host/…', () => {
  it.each([
    ['host/node1', 'node1'],
    ['instance/node1:9100', 'node1'],
    ['hostname/node1.example.com', 'node1.example.com'],
    ['node/ip-10-0-1-93.eu-west-1.compute.internal', 'ip-10-0-1-93.eu-west-1.compute.internal'],
    ['nodename/node1', 'node1'],
    ['host/[2001:db8::1]:9100', '2001:db8::1'],
    ['instance/https://api.example.com/health', 'api.example.com'],
  ])('%s is the host %s', (raw, name) => {
    const r = parseResourceRef(raw);
    expect(r).toEqual({ ok: true, ref: { raw, kind: 'host', name } });
  });
  it('refuses a host ref that names no host, with the fix', () => {
    const r = parseResourceRef('host/:9100');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/not a host name.*host\/node1/);
  });
});

describe('structural gate: hosts', () => {
  it('agrees exactly with the same host, whichever port or label the alert used', () => {
    for (const labels of [{ instance: 'node1:9100' }, { instance: 'node1:9256' }, { host: 'node1' }, { instance: 'node1', namespace: 'monitoring' }] as Array<
      Record<string, string>
    >) {
      expect(structuralGate(node1Entry, disk(labels), descriptive), JSON.stringify(labels)).toMatchObject({ passed: true, tier: 'exact' });
    }
  });

  it('agrees with the Kubernetes node of that name (the same machine)', () => {
    const i = alert({ alertname: 'KubeNodeNotReady', labels: { node: 'node1', job: 'kube-state-metrics', instance: '10.2.3.4:8080' } });
    expect(i.workload).toMatchObject({ kind: 'node', name: 'node1' });
    expect(structuralGate(node1Entry, i, descriptive)).toMatchObject({ passed: true, tier: 'exact' });
  });

  it('never lets two different hosts agree', () => {
    const v = structuralGate(node1Entry, disk({ instance: 'node2:9100' }), descriptive);
    expect(v).toMatchObject({ passed: false });
    expect(v.reason).toMatch(/different host: host\/node1 vs node2/);
  });

  it('never lets a host and a workload agree, even with one name', () => {
    const pod = alert({ alertname: 'KubePodCrashLooping', labels: { namespace: 'shop', pod: 'node1-7d9f8c6b5-x2k4q' } });
    expect(pod.workload).toMatchObject({ kind: 'deployment', name: 'node1' });
    expect(structuralGate(node1Entry, pod, descriptive)).toMatchObject({ passed: false });
    const workloadEntry = incidentEntry('incidents/monitoring-node1.md', { resource: 'monitoring/node1', title: 'a Deployment called node1' });
    const v = structuralGate(workloadEntry, disk({ instance: 'node1:9100', namespace: 'monitoring' }), descriptive);
    expect(v.passed).toBe(false);
    expect(v.reason).toMatch(/host node1, not the workload monitoring\/node1/);
  });

  it('needs an incident about a host: a host entry never agrees with an alert about nothing', () => {
    expect(structuralGate(node1Entry, alert({ alertname: 'NodeFilesystemSpaceFillingUp', labels: {} }), descriptive).passed).toBe(false);
  });

  it('a bare-namespace entry still holds a host scraped in that namespace (namespace tier, as before)', () => {
    const ns = incidentEntry('incidents/monitoring.md', { resource: 'monitoring', title: 'monitoring namespace' });
    expect(structuralGate(ns, disk({ instance: 'node1:9100', namespace: 'monitoring' }), descriptive)).toMatchObject({ passed: true, tier: 'namespace' });
  });

  it('a resource-less runbook answers host alerts as a runbook (the host is a scope)', () => {
    const rb = playbook('runbooks/disk.md', { title: 'Filesystem filling up', alerts: ['NodeFilesystemSpaceFillingUp'], body: '## Diagnosis\n\n- check du' });
    expect(structuralGate(rb, disk({ instance: 'node1:9100' }), descriptive)).toMatchObject({ passed: true, tier: 'runbook' });
  });

  it('recalls the host entry for its host and only for it', () => {
    const filler = [
      incidentEntry('incidents/web-oom.md', { resource: 'shop/web', title: 'web pods OOMKilled after a cache change', cause: 'cache raised past the limit' }),
      playbook('runbooks/cert.md', {
        title: 'Certificate expiring soon',
        alerts: ['CertificateExpiry'],
        body: 'Check cert-manager orders and ACME challenges.',
      }),
      playbook('runbooks/dns.md', { title: 'CoreDNS errors', alerts: ['CoreDNSErrorsHigh'], body: 'Check upstream resolvers and the loop plugin.' }),
    ];
    const snap = servedSnapshot([node1Entry, ...filler]);
    const r1 = recall(disk({ instance: 'node1:9100' }), snap, noHistory, recallOpts(), NOW);
    expect(r1.instant?.entry.id).toBe('incidents/node1-var-log.md');
    expect(r1.instant?.tier).toBe('exact');
    const r2 = recall(disk({ instance: 'node2:9100' }), snap, noHistory, recallOpts(), NOW);
    expect(r2.instant).toBeNull();
    expect(r2.trace.find((s) => s.entry === 'incidents/node1-var-log.md')?.reason).toMatch(/different host/);
  });

  it('describes a host as cluster/host, without the namespace its exporter ran in', () => {
    expect(describeWorkload({ namespace: 'monitoring', name: 'worker-1', kind: 'host', cluster: 'prod' })).toBe('prod/worker-1');
    expect(describeWorkload({ namespace: 'shop', name: 'web', kind: 'deployment', cluster: 'prod' })).toBe('prod/shop/web');
  });
});

describe('a human fix on a host alert names the host', () => {
  it('drafts `resource: host/<name>`, which reads back as the same host', () => {
    const i = disk({ instance: 'node1:9100', namespace: 'monitoring' });
    expect(catalogResource(i)).toBe('host/node1');
    const r = parseResourceRef(catalogResource(i)!);
    expect(r.ok && r.ref).toMatchObject({ kind: 'host', name: 'node1' });
    const node = alert({ alertname: 'KubeNodeNotReady', labels: { node: 'worker-1' } });
    expect(catalogResource(node)).toBe('host/worker-1');
    // A scrape job is not a resource: only the namespace, as before.
    expect(catalogResource(alert({ alertname: 'EtcdNoLeader', labels: { job: 'etcd', namespace: 'kube-system' } }))).toBe('kube-system');
  });
});
