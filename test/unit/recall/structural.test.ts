import { describe, expect, it } from 'vitest';
import { recall } from '../../../src/core/recall/recall.js';
import { alertNameContext, structuralGate } from '../../../src/core/recall/structural.js';
import type { Entry, Incident } from '../../../src/core/types.js';
import { NOW, alert, fixedSnapshot, servedSnapshot, incidentEntry, noHistory, playbook, recallOpts, stepsOf } from './recall-fixtures.js';

const descriptive = { opaque: false };
const opaque = { opaque: true };

const checkout = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api pods OOMKilled after cache size change',
  cause: 'The in-process cache was raised to 2 GiB while the limit stayed at 1.5 GiB.',
});

const crashPod = (pod: string, namespace = 'payments'): Incident =>
  alert({ alertname: 'KubePodCrashLooping', labels: { namespace, pod, cluster: 'prod-eu' }, annotations: { summary: 'Pod is crash looping.' } });

describe('structural gate: workload identity', () => {
  it('matches exactly when the pod reduces to the entry’s deployment', () => {
    const i = crashPod('checkout-api-7d9f8c6b5-x2k4q');
    expect(i.workload).toMatchObject({ namespace: 'payments', name: 'checkout-api', kind: 'deployment' });
    const v = structuralGate(checkout, i, descriptive);
    expect(v).toMatchObject({ passed: true, tier: 'exact' });
  });

  it('is case-insensitive on namespace and name', () => {
    const upper = incidentEntry('incidents/upper.md', { resource: 'Payments/Checkout-API', title: 'upper-case resource' });
    expect(structuralGate(upper, crashPod('checkout-api-7d9f8c6b5-x2k4q'), descriptive)).toMatchObject({ passed: true, tier: 'exact' });
  });

  it('reduces a StatefulSet ordinal pod to its StatefulSet', () => {
    const db = incidentEntry('incidents/db-wal.md', { resource: 'data/db', title: 'db-0 volume full' });
    const i = crashPod('db-0', 'data');
    expect(i.workload).toMatchObject({ name: 'db', kind: 'statefulset' });
    expect(structuralGate(db, i, descriptive)).toMatchObject({ passed: true, tier: 'exact' });
    // `db-1` is the same StatefulSet: same identity.
    expect(structuralGate(db, crashPod('db-1', 'data'), descriptive).passed).toBe(true);
  });

  it('never lets two different named workloads agree, even in one namespace', () => {
    const v = structuralGate(checkout, crashPod('billing-api-7d9f8c6b5-x2k4q'), descriptive);
    expect(v.passed).toBe(false);
    expect(v.tier).toBeUndefined();
    expect(v.reason).toMatch(/different workload/);
    // A name prefix is not the same workload either.
    expect(structuralGate(checkout, crashPod('checkout-api-canary-7d9f8c6b5-x2k4q'), descriptive).passed).toBe(false);
  });

  it('refuses the same name in another namespace', () => {
    const v = structuralGate(checkout, crashPod('checkout-api-7d9f8c6b5-x2k4q', 'staging'), descriptive);
    expect(v.passed).toBe(false);
    expect(v.reason).toMatch(/different namespace/);
  });

  it('gives the namespace tier when one side is a bare namespace', () => {
    const nsEntry = incidentEntry('incidents/payments-quota.md', { resource: 'payments', title: 'payments namespace quota exhausted' });
    expect(structuralGate(nsEntry, crashPod('checkout-api-7d9f8c6b5-x2k4q'), descriptive)).toMatchObject({ passed: true, tier: 'namespace' });
    expect(structuralGate(nsEntry, crashPod('checkout-api-7d9f8c6b5-x2k4q', 'data'), descriptive).passed).toBe(false);
    // A namespace-scoped alert (quota) against a workload entry in that namespace.
    const quota = alert({ alertname: 'KubeQuotaExceeded', labels: { namespace: 'payments' } });
    expect(quota.workload).toMatchObject({ namespace: 'payments', name: '' });
    expect(structuralGate(checkout, quota, descriptive)).toMatchObject({ passed: true, tier: 'namespace' });
  });

  it('prefers an exact alert_resource over a namespace resource', () => {
    const both = incidentEntry('incidents/both.md', { resource: 'payments', alertResource: 'payments/checkout-api', title: 'two identities' });
    expect(structuralGate(both, crashPod('checkout-api-7d9f8c6b5-x2k4q'), descriptive)).toMatchObject({ passed: true, tier: 'exact' });
  });

  it('refuses a resource-scoped entry for a workload-less incident', () => {
    const pd = alert({ alertname: 'CheckoutLatencyHigh', annotations: { summary: 'checkout latency' } });
    expect(pd.workload).toBeUndefined();
    expect(structuralGate(checkout, pd, descriptive).passed).toBe(false);
  });
});

describe('structural gate: cloud identities', () => {
  const rds = incidentEntry('incidents/orders-rds-storage.md', {
    resource: 'arn:aws:rds:eu-west-1:123456789012:db:orders',
    title: 'orders RDS storage full',
  });

  it('matches an incident carrying the same ARN', () => {
    const i = alert({ alertname: 'RDSFreeStorageLow', labels: { arn: 'arn:aws:rds:eu-west-1:123456789012:db:orders' } });
    expect(i.workload).toMatchObject({ name: 'orders', account: '123456789012', region: 'eu-west-1' });
    expect(structuralGate(rds, i, descriptive)).toMatchObject({ passed: true, tier: 'exact' });
  });

  it('fails when the account contradicts', () => {
    const i = alert({ alertname: 'RDSFreeStorageLow', labels: { arn: 'arn:aws:rds:eu-west-1:999999999999:db:orders' } });
    const v = structuralGate(rds, i, descriptive);
    expect(v.passed).toBe(false);
    expect(v.reason).toMatch(/account 123456789012 ≠ 999999999999/);
  });

  it('fails when the region contradicts', () => {
    const i = alert({ alertname: 'RDSFreeStorageLow', labels: { arn: 'arn:aws:rds:us-east-1:123456789012:db:orders' } });
    expect(structuralGate(rds, i, descriptive)).toMatchObject({ passed: false });
    expect(structuralGate(rds, i, descriptive).reason).toMatch(/region/);
  });

  it('treats an absent account as unknown, not different', () => {
    const i = alert({ alertname: 'RDSFreeStorageLow', labels: { service: 'orders', region: 'eu-west-1' } });
    expect(i.workload?.account).toBeUndefined();
    expect(structuralGate(rds, i, descriptive)).toMatchObject({ passed: true, tier: 'exact' });
    const other = alert({ alertname: 'RDSFreeStorageLow', labels: { service: 'orders', account_id: '999999999999' } });
    expect(structuralGate(rds, other, descriptive).passed).toBe(false);
  });
});

describe('structural gate: status', () => {
  const retired = incidentEntry('incidents/old.md', { resource: 'payments/checkout-api', title: 'checkout-api old OOM', status: 'retired' });
  const draft = incidentEntry('incidents/draft.md', { resource: 'payments/checkout-api', title: 'checkout-api draft OOM', status: 'draft' });
  const draftRunbook = playbook('runbooks/draft.md', { title: 'Draft runbook', status: 'draft', alerts: ['KubePodCrashLooping'], body: 'crash looping pods' });

  it('never passes retired or draft entries, whatever else agrees', () => {
    const i = crashPod('checkout-api-7d9f8c6b5-x2k4q');
    expect(structuralGate(retired, i, descriptive)).toEqual({ passed: false, reason: 'entry is retired' });
    expect(structuralGate(draft, i, descriptive)).toEqual({ passed: false, reason: 'entry is draft' });
    expect(structuralGate(draftRunbook, i, descriptive).passed).toBe(false);
  });

  it('records them under the `status` gate and never answers from them', () => {
    const snap = fixedSnapshot([retired, draft, draftRunbook], { 'incidents/old.md': 20, 'incidents/draft.md': 15, 'runbooks/draft.md': 12 });
    const r = recall(crashPod('checkout-api-7d9f8c6b5-x2k4q'), snap, noHistory, recallOpts(), NOW);
    expect(r.answer).toBeNull();
    expect(r.instant).toBeNull();
    expect(r.runbook).toBeNull();
    for (const id of ['incidents/old.md', 'incidents/draft.md', 'runbooks/draft.md']) {
      const [s] = stepsOf(r.trace, 'status', id);
      expect(s, id).toMatchObject({ passed: false });
      expect(stepsOf(r.trace, 'structural', id)).toHaveLength(0);
      expect(stepsOf(r.trace, 'margin', id)).toHaveLength(0);
    }
    // A non-active entry is not offered as a near miss either.
    expect(r.nearMiss).toBeNull();
  });

  it('keeps a draft runbook out of the known alert names', () => {
    const snap = servedSnapshot([draftRunbook]);
    expect(snap.knownAlerts.has('kubepodcrashlooping')).toBe(false);
    expect(snap.byAlert.get('kubepodcrashlooping')).toHaveLength(1);
  });
});

describe('structural gate: runbooks and alert names', () => {
  const crashRunbook = playbook('runbooks/pod-crash.md', {
    title: 'Pod crash looping (CrashLoopBackOff)',
    alerts: ['KubePodCrashLooping'],
    description: 'A container keeps restarting: CrashLoopBackOff.',
    body: '## Diagnosis\n\n- kubectl logs --previous on the crash looping pod\n- check restarts and events\n- check the container exit code',
  });
  const generic = playbook('runbooks/generic.md', { title: 'Generic triage', body: 'Look at dashboards.' });
  /** Unrelated runbooks, so term statistics look like a real catalog's. */
  const filler = [
    playbook('runbooks/disk.md', {
      title: 'Node disk filling up',
      alerts: ['NodeFilesystemSpaceFillingUp'],
      body: 'Find large files with du; clean up old images.',
    }),
    playbook('runbooks/cert.md', { title: 'Certificate expiring soon', alerts: ['CertificateExpiry'], body: 'Check cert-manager orders and ACME challenges.' }),
    playbook('runbooks/dns.md', { title: 'CoreDNS errors', alerts: ['CoreDNSErrorsHigh'], body: 'Check upstream resolvers and the loop plugin.' }),
  ];
  const known = new Set(['kubepodcrashlooping']);

  it('classifies alert names as descriptive or opaque', () => {
    expect(alertNameContext('KubePodCrashLooping', known)).toEqual({ opaque: false });
    expect(alertNameContext('ApacheRestart', known)).toEqual({ opaque: false });
    expect(alertNameContext('Watchdog', known)).toEqual({ opaque: false });
    expect(alertNameContext('Alertfc7494', known)).toEqual({ opaque: true });
    expect(alertNameContext('a9f3e1c2', known)).toEqual({ opaque: true });
    expect(alertNameContext('CriticalAlert42', known)).toEqual({ opaque: true });
    // A known name is never opaque, whatever it looks like.
    expect(alertNameContext('Alertfc7494', new Set(['alertfc7494']))).toEqual({ opaque: false });
    expect(alertNameContext('etcdNoLeader', known)).toEqual({ opaque: false });
  });

  it('passes a runbook listing the alert, with the runbook tier', () => {
    const v = structuralGate(crashRunbook, crashPod('web-7d9f8c6b5-x2k4q', 'web'), descriptive);
    expect(v).toMatchObject({ passed: true, tier: 'runbook' });
    expect(v.reason).toMatch(/covers alert KubePodCrashLooping/);
  });

  it('fails a runbook whose alerts exclude a descriptive alertname', () => {
    const i = alert({ alertname: 'ApacheRestart', labels: { namespace: 'web', pod: 'front-7d9f8c6b5-x2k4q' } });
    const names = alertNameContext(i.alertname, known);
    const v = structuralGate(crashRunbook, i, names);
    expect(v.passed).toBe(false);
    expect(v.reason).toMatch(/covers kubepodcrashlooping, not ApacheRestart/);
  });

  it('lets an opaque alertname match a listing runbook by content', () => {
    const i = alert({ alertname: 'Alertfc7494', labels: { namespace: 'web', pod: 'front-7d9f8c6b5-x2k4q' } });
    const names = alertNameContext(i.alertname, known);
    expect(names.opaque).toBe(true);
    const v = structuralGate(crashRunbook, i, names);
    expect(v).toMatchObject({ passed: true, tier: 'runbook' });
    expect(v.reason).toMatch(/matched by content/);
    // Workload-less: still by content, but scopeless.
    const pd = alert({ alertname: 'Alertfc7494' });
    expect(structuralGate(crashRunbook, pd, opaque)).toMatchObject({ passed: true, tier: 'scopeless' });
  });

  it('answers an opaque alert with the runbook whose content matches, end to end', () => {
    const i = alert({
      alertname: 'Alertfc7494',
      labels: { namespace: 'web', pod: 'front-7d9f8c6b5-x2k4q', reason: 'CrashLoopBackOff', container: 'front' },
      annotations: { summary: 'Pod is crash looping.', description: 'front container restarts: crash looping (CrashLoopBackOff)' },
    });
    const r = recall(i, servedSnapshot([crashRunbook, generic, ...filler]), noHistory, recallOpts(), NOW);
    expect(r.runbook?.entry.id).toBe('runbooks/pod-crash.md');
    expect(r.runbook?.tier).toBe('runbook');
    expect(r.answer).toMatchObject({ kind: 'runbook', entry: 'runbooks/pod-crash.md' });
    // Matched by content weighs less than matched by name.
    const byName = recall({ ...i, alertname: 'KubePodCrashLooping' }, servedSnapshot([crashRunbook, generic, ...filler]), noHistory, recallOpts(), NOW);
    expect(r.runbook!.confidence).toBeLessThan(byName.runbook!.confidence);
  });

  it('does not show a sibling’s runbook for a descriptive alert nobody covers, end to end', () => {
    const i = alert({
      alertname: 'ApacheRestart',
      labels: { namespace: 'web', pod: 'front-7d9f8c6b5-x2k4q' },
      annotations: { summary: 'Pod is crash looping.', description: 'front pod crash looping, restarts, kubectl logs previous' },
    });
    const r = recall(i, servedSnapshot([crashRunbook]), noHistory, recallOpts(), NOW);
    expect(r.ranked).toContain('runbooks/pod-crash.md');
    expect(r.runbook).toBeNull();
    expect(stepsOf(r.trace, 'structural', 'runbooks/pod-crash.md')[0]).toMatchObject({ passed: false });
  });

  it('passes a resource-less runbook without alerts for any alert', () => {
    expect(structuralGate(generic, crashPod('web-7d9f8c6b5-x2k4q', 'web'), descriptive)).toMatchObject({ passed: true, tier: 'runbook' });
    expect(structuralGate(generic, alert({ alertname: 'Anything' }), descriptive)).toMatchObject({ passed: true, tier: 'scopeless' });
  });

  it('offers a past incident of the same alert on another workload as a structural near miss', () => {
    const listed: Entry = { ...checkout, alerts: ['kubepodcrashlooping'] };
    const snap = fixedSnapshot([listed], { [listed.id]: 10 });
    const r = recall(crashPod('billing-api-7d9f8c6b5-x2k4q'), snap, noHistory, recallOpts(), NOW);
    expect(r.answer).toBeNull();
    expect(r.nearMiss).toMatchObject({ entry: listed.id, gate: 'structural' });
    expect(r.nearMiss?.reason).toMatch(/different workload/);
  });
});
