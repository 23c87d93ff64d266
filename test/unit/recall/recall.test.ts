import { describe, expect, it } from 'vitest';
import { buildQuery } from '../../../src/core/recall/build-query.js';
import { buildCatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import { entryForRunbookUrl, recall } from '../../../src/core/recall/recall.js';
import type { GateTraceStep } from '../../../src/core/types.js';
import {
  NOW,
  alert,
  entryFrom,
  fixedSnapshot,
  fixedScoreIndex,
  servedSnapshot,
  incidentEntry,
  noHistory,
  playbook,
  recallOpts,
  stepsOf,
  tracks,
} from './recall-fixtures.js';

const crashBook = playbook('runbooks/pod-crash.md', {
  title: 'Pod crash looping',
  body: '## Diagnosis\n\n- kubectl logs --previous\n- check events',
});
const sourced = playbook('imported/payments-latency.md', {
  title: 'Payments latency runbook',
  source: 'https://wiki.acme.dev/runbooks/payments-latency',
  body: 'Check the payment provider status page.',
});
const scoped = incidentEntry('incidents/runbook-named.md', { resource: 'payments/checkout-api', title: 'scoped entry' });

describe('runbook_url selects an entry', () => {
  const snap = fixedSnapshot([crashBook, sourced, scoped], {});

  it('by path suffix, ignoring query, fragment and .md', () => {
    expect(entryForRunbookUrl('https://github.com/acme/catalog/blob/main/runbooks/pod-crash.md', snap)?.id).toBe(crashBook.id);
    expect(entryForRunbookUrl('https://runbooks.acme.dev/runbooks/pod-crash/?ref=alert#steps', snap)?.id).toBe(crashBook.id);
    expect(entryForRunbookUrl('https://runbooks.acme.dev/other/pod-crash-2', snap)).toBeUndefined();
    // A suffix must start at a path boundary.
    expect(entryForRunbookUrl('https://x.dev/myrunbooks/pod-crash.md', snap)).toBeUndefined();
  });

  it('by the entry’s `source` URL', () => {
    expect(entryForRunbookUrl('https://wiki.acme.dev/runbooks/payments-latency', snap)?.id).toBe(sourced.id);
    expect(entryForRunbookUrl('https://wiki.acme.dev/runbooks/payments-latency/?utm=x', snap)?.id).toBe(sourced.id);
    expect(entryForRunbookUrl('   ', snap)).toBeUndefined();
  });

  it('answers with the selected runbook, tier runbook_url, traced', () => {
    const i = alert({
      alertname: 'PaymentsLatencyHigh',
      labels: { namespace: 'payments', pod: 'gateway-7d9f8c6b5-x2k4q' },
      annotations: { summary: 'payments latency', runbook_url: 'https://wiki.acme.dev/runbooks/payments-latency' },
    });
    const r = recall(i, fixedSnapshot([crashBook, sourced], { [crashBook.id]: 30, [sourced.id]: 12 }), noHistory, recallOpts(), NOW);
    expect(r.runbook).toMatchObject({ kind: 'runbook', tier: 'runbook_url' });
    expect(r.runbook?.entry.id).toBe(sourced.id);
    const [s] = stepsOf(r.trace, 'structural', sourced.id).filter((x) => x.value === 'runbook_url');
    expect(s).toMatchObject({ passed: true, threshold: null });
    expect(s?.reason).toContain('https://wiki.acme.dev/runbooks/payments-latency');
  });

  it('selects the runbook directly, even when its text shares little with the alert', () => {
    // SPEC §6: a runbook_url that points at a catalog entry "selects it directly".
    const i = alert({
      alertname: 'Alertfc7494',
      labels: { namespace: 'payments', pod: 'gateway-7d9f8c6b5-x2k4q' },
      annotations: { summary: 'p99 above 2s', runbook_url: 'https://github.com/acme/catalog/blob/main/runbooks/pod-crash.md' },
    });
    const r = recall(i, fixedSnapshot([crashBook, sourced], { [crashBook.id]: 2 }), noHistory, recallOpts(), NOW);
    expect(r.runbook?.entry.id).toBe(crashBook.id);
    expect(r.runbook?.tier).toBe('runbook_url');
  });

  it('never selects a resource-scoped or inactive entry through runbook_url', () => {
    const retired = playbook('runbooks/old.md', { title: 'Old runbook', status: 'retired', body: 'gone' });
    const snap2 = fixedSnapshot([scoped, retired], { [scoped.id]: 30, [retired.id]: 30 });
    for (const url of ['https://x.dev/incidents/runbook-named.md', 'https://x.dev/runbooks/old.md']) {
      const i = alert({ alertname: 'Other', labels: { namespace: 'web', pod: 'front-7d9f8c6b5-x2k4q' }, annotations: { runbook_url: url } });
      const r = recall(i, snap2, noHistory, recallOpts(), NOW);
      expect(r.runbook, url).toBeNull();
      expect(
        r.trace.some((s) => s.value === 'runbook_url'),
        url,
      ).toBe(false);
    }
  });

  it('still applies the outcome gate to a selected runbook', () => {
    const i = alert({ alertname: 'PaymentsLatencyHigh', annotations: { runbook_url: 'https://wiki.acme.dev/runbooks/payments-latency' } });
    const r = recall(i, fixedSnapshot([sourced], { [sourced.id]: 30 }), tracks({ [sourced.id]: { recalls: 0, resolved: 0, down: 3 } }), recallOpts(), NOW);
    expect(r.runbook).toBeNull();
    expect(stepsOf(r.trace, 'outcome', sourced.id)[0]).toMatchObject({ passed: false, value: 0.2 });
  });
});

describe('gate trace', () => {
  const KEYS = ['entry', 'gate', 'passed', 'reason', 'threshold', 'value'];
  const isStep = (s: GateTraceStep): void => {
    expect(Object.keys(s).sort()).toEqual(KEYS);
    expect(typeof s.gate).toBe('string');
    expect(s.entry === null || typeof s.entry === 'string').toBe(true);
    expect(typeof s.passed).toBe('boolean');
    expect(s.value === null || ['number', 'string'].includes(typeof s.value)).toBe(true);
    expect(s.threshold === null || ['number', 'string'].includes(typeof s.threshold)).toBe(true);
    expect(s.reason.length).toBeGreaterThan(0);
  };

  it('gives every decision {gate, entry, passed, value, threshold, reason}', () => {
    const entries = [
      incidentEntry('incidents/a.md', { resource: 'payments/checkout-api', title: 'checkout-api OOMKilled memory', cause: 'cache' }),
      incidentEntry('incidents/b.md', { resource: 'payments/billing-api', title: 'billing-api OOMKilled memory', cause: 'leak' }),
      incidentEntry('incidents/c.md', { resource: 'payments/checkout-api', title: 'checkout-api OOMKilled old', status: 'retired' }),
      playbook('runbooks/KubePodCrashLooping.md', { title: 'Pod crash looping', alerts: ['KubePodCrashLooping'], body: 'crash looping OOMKilled memory' }),
      playbook('runbooks/other.md', { title: 'Node memory pressure', alerts: ['NodeMemoryPressure'], body: 'memory pressure' }),
    ];
    const i = alert({
      alertname: 'KubePodCrashLooping',
      labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', reason: 'OOMKilled' },
      annotations: { summary: 'checkout-api OOMKilled', description: 'memory limit reached' },
    });
    const r = recall(i, servedSnapshot(entries), tracks({ 'incidents/a.md': { recalls: 9, resolved: 0 } }), recallOpts(), NOW);
    expect(r.trace.length).toBeGreaterThanOrEqual(entries.length);
    r.trace.forEach(isStep);
    // Every candidate got a structural (or status) verdict, and every gate appears that ran.
    for (const id of r.ranked)
      expect(
        r.trace.some((s) => s.entry === id && (s.gate === 'structural' || s.gate === 'status')),
        id,
      ).toBe(true);
    expect(new Set(r.trace.map((s) => s.gate))).toEqual(new Set(['structural', 'status', 'margin', 'outcome']));
    // Structurally agreeing candidates rank first.
    expect(r.ranked.slice(0, 2).sort()).toEqual(['incidents/a.md', 'runbooks/KubePodCrashLooping.md']);
  });

  it('explains a recall that found nothing at all', () => {
    const r = recall(alert({ alertname: 'Nothing' }), fixedSnapshot([crashBook], {}), noHistory, recallOpts(), NOW);
    expect(r).toMatchObject({ answer: null, instant: null, runbook: null, nearMiss: null, ranked: [] });
  });
});

describe('candidates', () => {
  it('adds entries that list the alertname even when text ranks them out', () => {
    const listed = playbook('runbooks/quiet.md', { title: 'Quiet', alerts: ['KubeJobFailed'], body: 'nothing shared' });
    const snap = buildCatalogSnapshot([listed], fixedScoreIndex([listed], {}), NOW);
    const r = recall(alert({ alertname: 'KubeJobFailed', labels: { namespace: 'batch', job_name: 'nightly' } }), snap, noHistory, recallOpts(), NOW);
    expect(r.ranked).toEqual([listed.id]);
    expect(stepsOf(r.trace, 'structural', listed.id)[0]?.passed).toBe(true);
    expect(stepsOf(r.trace, 'margin', listed.id)[0]).toMatchObject({ passed: false, value: 0 });
  });

  it('queries title, message, workload, alertname and meaningful labels, never identity labels', () => {
    const i = alert({
      alertname: 'KubePodCrashLooping',
      labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', instance: '10.0.0.7:8080', container: 'server', persistentvolumeclaim: 'data-0' },
      annotations: { summary: 'Pod is crash looping.', description: 'restarted 12 times' },
    });
    const { tokens } = buildQuery(i);
    for (const t of ['kubepodcrashloop', 'crash', 'loop', 'checkout', 'server', 'persistentvolumeclaim']) expect(tokens).toContain(t);
    // Identity labels (instance, pod name hash) stay out; so do the *names* of routing labels.
    for (const t of ['x2k4q', 'instance', 'namespace', 'payments']) expect(tokens).not.toContain(t);
    expect(tokens.some((t) => /^\d+$/.test(t))).toBe(false);
  });
});

describe('aliases and pointer pages', () => {
  const degraded = entryFrom('node/NodeRAIDDegraded.md', '---\ntitle: Node RAID Degraded\n---\n# NodeRAIDDegraded\n\n## Meaning\n\nRAID array is degraded.\n');
  const pointer = entryFrom(
    'node/NodeRAIDDiskFailure.md',
    '---\ntitle: Node RAID Disk Failure\n---\n# NodeRAIDDiskFailure\n\nSee [Node RAID Degraded]({{< ref "./NodeRAIDDegraded.md" >}})\n',
  );
  const other = playbook('runbooks/disk.md', { title: 'Disk', alerts: ['NodeDiskIOSaturation'], body: 'disks' });
  const renamed = playbook('etcd/quota.md', { title: 'etcd quota', alerts: ['etcdBackendQuotaLowSpace'], body: 'defrag' });
  const withAlias = {
    ...renamed,
    alerts: [...renamed.alerts, 'etcddatabasequotalowspace'],
    alertNames: ['etcdBackendQuotaLowSpace', 'etcdDatabaseQuotaLowSpace'],
  };

  it('a renamed alert finds the runbook that lists its new name as an alias', () => {
    const i = alert({ alertname: 'etcdDatabaseQuotaLowSpace', labels: { namespace: 'kube-system', job: 'etcd' } });
    expect(recall(i, fixedSnapshot([renamed], { [renamed.id]: 12 }), noHistory, recallOpts(), NOW).answer).toBeNull();
    expect(recall(i, fixedSnapshot([withAlias], { [renamed.id]: 12 }), noHistory, recallOpts(), NOW).answer?.entry).toBe(renamed.id);
  });

  it('a pointer page and its target are one runbook: the margin is taken against the next rival', () => {
    const i = alert({ alertname: 'Alertae178a', labels: { namespace: 'search', device: 'sda' }, annotations: { summary: 'Failed device in RAID array.' } });
    const scores = { [degraded.id]: 20, [pointer.id]: 19, [other.id]: 5 };
    const withFamily = recall(i, fixedSnapshot([degraded, pointer, other], scores), noHistory, recallOpts(), NOW);
    expect(withFamily.answer?.entry).toBe(degraded.id);
    expect(stepsOf(withFamily.trace, 'margin', degraded.id)[0]?.reason).toContain(other.id);
    expect(withFamily.answer?.related).toBeUndefined();
    // Read as two pages, the pointer is a near-sibling 5% behind the alert cannot tell from its
    // target: one of two related runbooks, not an exact answer.
    const { pointsTo: _, ...standalone } = pointer;
    expect(recall(i, fixedSnapshot([degraded, standalone, other], scores), noHistory, recallOpts(), NOW).answer?.related).toEqual([standalone.id]);
  });

  it("the pointer page's own alert is covered by its target too", () => {
    const i = alert({ alertname: 'NodeRAIDDiskFailure', labels: { namespace: 'search' } });
    const r = recall(i, fixedSnapshot([degraded, pointer, other], { [degraded.id]: 20, [pointer.id]: 19, [other.id]: 5 }), noHistory, recallOpts(), NOW);
    expect(stepsOf(r.trace, 'structural', degraded.id)[0]).toMatchObject({ passed: true, reason: 'covers alert NodeRAIDDiskFailure' });
    expect(r.answer?.entry).toBe(degraded.id);
  });
});
