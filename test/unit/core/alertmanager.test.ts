import { describe, expect, it } from 'vitest';
import { normalizeSeverity, parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';
import { RepriseError } from '../../../src/core/errors.js';

/** One line of the recall corpus (eval/corpus cases-dev.jsonl), as Alertmanager sends it. */
const corpusPayload = {
  alerts: [
    {
      annotations: {
        description: 'Pod payments/payments-worker-7d9f8c6b5-73ffe (worker) is in waiting state (reason: "CrashLoopBackOff").',
        runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping',
        summary: 'Pod is crash looping.',
      },
      endsAt: '0001-01-01T00:00:00Z',
      fingerprint: '3735f7d4f107cadd',
      generatorURL: 'http://prometheus-k8s.monitoring:9090/graph',
      labels: {
        alertname: 'KubePodCrashLooping',
        cluster: 'prod-eu-1',
        container: 'worker',
        namespace: 'payments',
        pod: 'payments-worker-7d9f8c6b5-73ffe',
        prometheus: 'monitoring/k8s',
        severity: 'warning',
      },
      startsAt: '2026-11-29T03:12:00Z',
      status: 'firing',
    },
  ],
  commonAnnotations: {},
  commonLabels: { alertname: 'KubePodCrashLooping' },
  externalURL: 'http://alertmanager.monitoring:9093',
  groupKey: '{}:{alertname="KubePodCrashLooping"}',
  groupLabels: { alertname: 'KubePodCrashLooping' },
  receiver: 'reprise',
  status: 'firing',
  truncatedAlerts: 0,
  version: '4',
};

function clone<T>(v: T): T {
  return structuredClone(v);
}

function errorOf(body: unknown): RepriseError {
  try {
    parseAlertmanagerPayload(body);
  } catch (e) {
    if (e instanceof RepriseError) return e;
    throw e;
  }
  throw new Error('expected parseAlertmanagerPayload to throw');
}

describe('parseAlertmanagerPayload', () => {
  it('normalizes a corpus payload into one Incident', () => {
    const { incidents, groupKey, receiver } = parseAlertmanagerPayload(corpusPayload);
    expect(groupKey).toBe('{}:{alertname="KubePodCrashLooping"}');
    expect(receiver).toBe('reprise');
    expect(incidents).toHaveLength(1);
    const i = incidents[0];
    expect(i).toEqual({
      source: 'alertmanager',
      status: 'firing',
      fingerprint: '3735f7d4f107cadd',
      groupKey: '{}:{alertname="KubePodCrashLooping"}',
      triggerKey: 'kubepodcrashlooping|payments|deployment|payments-worker|prod-eu-1',
      alertname: 'KubePodCrashLooping',
      title: 'Pod is crash looping.',
      message: corpusPayload.alerts[0]?.annotations.description,
      severity: 'warning',
      labels: corpusPayload.alerts[0]?.labels,
      annotations: corpusPayload.alerts[0]?.annotations,
      startsAt: '2026-11-29T03:12:00.000Z',
      workload: { namespace: 'payments', name: 'payments-worker', kind: 'deployment', cluster: 'prod-eu-1' },
      identity: { basis: 'kubernetes', labels: ['pod', 'namespace', 'cluster'] },
      runbookUrl: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping',
      generatorUrl: 'http://prometheus-k8s.monitoring:9090/graph',
      alertmanagerUrl: 'http://alertmanager.monitoring:9093',
      group: { labels: { alertname: 'KubePodCrashLooping' }, commonLabels: { alertname: 'KubePodCrashLooping' }, truncatedAlerts: 0, receiver: 'reprise' },
      links: [
        { label: 'source', url: 'http://prometheus-k8s.monitoring:9090/graph' },
        { label: 'runbook', url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping' },
        {
          label: 'silence',
          url: 'http://alertmanager.monitoring:9093/#/silences/new?filter=%7Balertname%3D%22KubePodCrashLooping%22%2Ccluster%3D%22prod-eu-1%22%2Cnamespace%3D%22payments%22%2Cpod%3D%22payments-worker-7d9f8c6b5-73ffe%22%7D',
        },
      ],
    });
    // Go's zero time means "no end yet": no endsAt on a firing alert.
    expect(i).not.toHaveProperty('endsAt');
  });

  it('turns a group of N alerts into N incidents, including resolved ones', () => {
    const p = clone(corpusPayload);
    const first = p.alerts[0]!;
    p.alerts.push(
      { ...clone(first), fingerprint: 'bbbb', labels: { ...first.labels, pod: 'db-0' } },
      { ...clone(first), fingerprint: 'cccc', status: 'resolved', endsAt: '2026-11-29T03:40:00Z' },
    );
    const { incidents } = parseAlertmanagerPayload(p);
    expect(incidents.map((i) => i.fingerprint)).toEqual(['3735f7d4f107cadd', 'bbbb', 'cccc']);
    expect(incidents[1]?.workload).toMatchObject({ name: 'db', kind: 'statefulset' });
    expect(incidents[2]).toMatchObject({ status: 'resolved', endsAt: '2026-11-29T03:40:00.000Z' });
  });

  it('is lenient where Alertmanager is: no version, no annotations, extra fields', () => {
    const incidents = parseAlertmanagerPayload({
      alerts: [{ status: 'firing', labels: { alertname: 'Watchdog', severity: 'none' }, startsAt: '2026-01-01T00:00:00Z', extra: 1 }],
      somethingNew: true,
    }).incidents;
    expect(incidents[0]).toMatchObject({
      title: 'Watchdog',
      message: '',
      severity: 'none',
      annotations: {},
      triggerKey: 'watchdog||||',
    });
    expect(incidents[0]?.workload).toBeUndefined();
    // No fingerprint from the sender: a stable one is computed from the labels.
    expect(incidents[0]?.fingerprint).toMatch(/^[0-9a-f]{16}$/);
  });

  it('falls back to receivedAt when startsAt is missing, and message to summary', () => {
    const { incidents } = parseAlertmanagerPayload(
      { alerts: [{ status: 'firing', labels: { alertname: 'A' }, annotations: { summary: 'S', message: '' } }] },
      { receivedAt: '2026-02-02T00:00:00.000Z' },
    );
    expect(incidents[0]).toMatchObject({ startsAt: '2026-02-02T00:00:00.000Z', title: 'S', message: 'S' });
    expect(errorOf({ alerts: [{ status: 'firing', labels: { alertname: 'A' } }] }).message).toBe('alerts[0].startsAt is required');
  });

  it('keeps the good alerts of a group and skips a malformed one, naming it precisely', () => {
    const p = clone(corpusPayload);
    p.alerts.push(
      clone(p.alerts[0]!),
      { ...clone(p.alerts[0]!), status: 'pending' },
      { ...clone(p.alerts[0]!), labels: { ...clone(p.alerts[0]!).labels, alertname: ' ' } },
    );
    const batch = parseAlertmanagerPayload(p);
    expect(batch.incidents).toHaveLength(2);
    expect(batch.skipped).toEqual([
      { index: 2, reason: 'alerts[2].status must be "firing" or "resolved", got "pending"' },
      { index: 3, reason: 'alerts[3].labels.alertname must not be empty' },
    ]);
  });

  it('skips an alert with no start time when there is no arrival time, and refuses a body with no good alert', () => {
    const good = { status: 'firing', labels: { alertname: 'A' }, startsAt: '2026-02-02T00:00:00Z' };
    const batch = parseAlertmanagerPayload({ alerts: [good, { status: 'firing', labels: { alertname: 'B' } }] });
    expect(batch.incidents.map((i) => i.alertname)).toEqual(['A']);
    expect(batch.skipped).toEqual([{ index: 1, reason: 'alerts[1].startsAt is required' }]);
    const err = errorOf({
      alerts: [
        { status: 'pending', labels: { alertname: 'A' } },
        { status: 'firing', labels: {} },
      ],
    });
    expect(err.code).toBe('invalid_payload');
    expect(err.message).toMatch(/alerts\[0\]\.status must be "firing" or "resolved", got "pending".*alerts\[1\]\.labels\.alertname is required/s);
  });

  it.each([
    [{}, 'alerts is required'],
    [{ alerts: [] }, 'alerts must have at least 1 item(s)'],
    [{ alerts: 'x' }, 'alerts must be an array, got "x"'],
    [null, 'body must be an object, got null'],
    [{ alerts: [{ status: 'firing', labels: {} }] }, 'alerts[0].labels.alertname is required'],
    [{ alerts: [{ status: 'firing', labels: { alertname: ' ' } }] }, 'alerts[0].labels.alertname must not be empty'],
    [{ alerts: [{ status: 'firing', labels: { alertname: 'A', n: 3 } }] }, 'alerts[0].labels.n must be a string, got number 3'],
    [
      { alerts: [{ status: 'firing', labels: { alertname: 'A' }, startsAt: 'yesterday' }] },
      'alerts[0].startsAt must be an RFC 3339 timestamp, got "yesterday"',
    ],
  ])('rejects %j with "%s"', (body, message) => {
    const err = errorOf(body);
    expect(err.code).toBe('invalid_payload');
    expect(err.message).toBe(message);
  });
});

describe('the notification around the alerts, and the links they carry', () => {
  it('keeps groupLabels, commonLabels and truncatedAlerts on the batch and on each incident (one shared object)', () => {
    const p = clone(corpusPayload);
    p.alerts.push({ ...clone(p.alerts[0]!), fingerprint: 'bbbb', labels: { ...p.alerts[0]!.labels, pod: 'payments-worker-7d9f8c6b5-abcde' } });
    p.truncatedAlerts = 10;
    const batch = parseAlertmanagerPayload(p);
    expect(batch.group).toEqual({
      labels: { alertname: 'KubePodCrashLooping' },
      commonLabels: { alertname: 'KubePodCrashLooping' },
      truncatedAlerts: 10,
      receiver: 'reprise',
    });
    expect(batch.incidents).toHaveLength(2);
    for (const i of batch.incidents) expect(i.group).toBe(batch.group);
  });

  it("caps an oversized value in commonLabels like the alert's own, and reports the cut once, on the alert", () => {
    const p = clone(corpusPayload);
    const huge = 'A'.repeat(20_000);
    p.alerts[0]!.labels.container = huge;
    p.commonLabels = { ...p.commonLabels, container: huge } as typeof p.commonLabels;
    const batch = parseAlertmanagerPayload(p);
    expect((batch.group!.commonLabels['container'] ?? '').length).toBeLessThan(8300);
    expect(batch.truncated).toEqual([{ alert: 0, field: 'label.container', length: 20_000 }]);
  });

  it('reads a notification without them (an older Alertmanager, a generic sender) as no group, and a wrong type as absent', () => {
    const { groupLabels: _g, commonLabels: _c, truncatedAlerts: _t, ...bare } = clone(corpusPayload);
    expect(parseAlertmanagerPayload(bare).incidents[0]!.group).toBeUndefined();
    const odd = parseAlertmanagerPayload({ ...clone(corpusPayload), truncatedAlerts: 'ten', groupLabels: 7 });
    expect(odd.group).toMatchObject({ labels: {}, truncatedAlerts: 0 });
  });

  it('takes a runbook_url written without a scheme as https, for the card and for recall', () => {
    const p = clone(corpusPayload);
    p.alerts[0]!.annotations.runbook_url = 'runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping';
    const [i] = parseAlertmanagerPayload(p).incidents;
    expect(i!.runbookUrl).toBe('https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping');
    expect(i!.links).toContainEqual({ label: 'runbook', url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping' });
  });

  it('never drops a link in silence: a javascript: runbook_url or a relative one is refused with its reason, on the incident and the batch', () => {
    const p = clone(corpusPayload);
    p.alerts[0]!.annotations.runbook_url = 'javascript:alert(document.domain)';
    (p.alerts[0]!.annotations as Record<string, string>)['dashboard'] = '/d/payments';
    const batch = parseAlertmanagerPayload(p);
    const [i] = batch.incidents;
    expect(i!.links!.map((l) => l.label)).toEqual(['source', 'silence']);
    expect(i!.refusedLinks).toEqual([
      { field: 'runbook_url', reason: 'not a web link (javascript: scheme)' },
      { field: 'dashboard', reason: 'not a web address (no scheme and no host)' },
    ]);
    expect(batch.refusedLinks).toEqual(i!.refusedLinks!.map((r) => ({ alert: 0, ...r })));
  });

  it('pre-fills the silence on the Alertmanager that sent it, under its path prefix', () => {
    const p = { ...clone(corpusPayload), externalURL: 'https://ops.example.org/alertmanager' };
    const [i] = parseAlertmanagerPayload(p).incidents;
    const silence = i!.links!.find((l) => l.label === 'silence');
    expect(silence?.url.startsWith('https://ops.example.org/alertmanager/#/silences/new?filter=')).toBe(true);
  });

  it('shows links to allowed hosts only (links.allowed_hosts), the Alertmanager silence included', () => {
    const [i] = parseAlertmanagerPayload(clone(corpusPayload), { links: { allowedHosts: ['*.prometheus-operator.dev'] } }).incidents;
    expect(i!.links).toEqual([{ label: 'runbook', url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping' }]);
    expect(i!.refusedLinks?.map((r) => r.field)).toEqual(['generatorURL', 'externalURL']);
    // Recall still reads the runbook_url and the generator expression: the policy is about links shown.
    expect(i!.generatorUrl).toBe('http://prometheus-k8s.monitoring:9090/graph');
  });
});

describe('normalizeSeverity', () => {
  it.each([
    ['critical', 'critical'],
    ['page', 'critical'],
    ['ERROR', 'critical'],
    ['warning', 'warning'],
    ['info', 'info'],
    ['none', 'none'],
    ['weird', 'warning'],
    [undefined, 'warning'],
  ] as const)('%s → %s', (raw, sev) => {
    expect(normalizeSeverity(raw)).toBe(sev);
  });
});
