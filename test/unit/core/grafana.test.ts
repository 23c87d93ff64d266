import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';
import { parseGrafanaPayload } from '../../../src/core/grafana.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../fixtures/sources/${name}`, import.meta.url), 'utf8'));

describe('Grafana unified alerting payloads through the Alertmanager parser', () => {
  it('maps a firing alert, tagged as grafana, with no Alertmanager URL taken from Grafana', () => {
    const batch = parseAlertmanagerPayload(fixture('grafana-firing.json'), { source: 'grafana' });
    expect(batch.incidents).toHaveLength(1);
    const i = batch.incidents[0]!;
    expect(i).toMatchObject({
      source: 'grafana',
      status: 'firing',
      fingerprint: 'b3c1e2f4a5d6c7e8',
      alertname: 'KubePodCrashLooping',
      severity: 'critical',
      runbookUrl: 'https://runbooks.example.org/KubePodCrashLooping',
      workload: { namespace: 'payments' },
    });
    expect(i.endsAt).toBeUndefined();
    expect(i.alertmanagerUrl).toBeUndefined();
  });

  it('pairs the resolved alert with the firing one', () => {
    const firing = parseAlertmanagerPayload(fixture('grafana-firing.json'), { source: 'grafana' }).incidents[0]!;
    const resolved = parseAlertmanagerPayload(fixture('grafana-resolved.json'), { source: 'grafana' }).incidents[0]!;
    expect(resolved.status).toBe('resolved');
    expect(resolved.fingerprint).toBe(firing.fingerprint);
    expect(resolved.triggerKey).toBe(firing.triggerKey);
    expect(resolved.endsAt).toBe('2026-11-30T19:05:00.000Z');
  });
});

describe('what a Grafana notification says, kept for the card', () => {
  const two = () => parseGrafanaPayload(fixture('grafana-two-rules.json'));

  it('keeps two rules that share an alertname as two triggers', () => {
    const { incidents } = two();
    expect(incidents).toHaveLength(2);
    expect(new Set(incidents.map((i) => i.triggerKey)).size).toBe(2);
    expect(incidents.every((i) => i.source === 'grafana')).toBe(true);
  });

  it('links the source, the runbook (taken as https without a scheme), dashboard, panel, silence and image, with fixed labels', () => {
    const [orders] = two().incidents;
    expect(orders!.runbookUrl).toBe('https://runbooks.example.org/shop/orders-per-minute');
    expect(orders!.links).toEqual([
      { label: 'source', url: 'https://grafana.example.org/alerting/grafana/bdq8kz1r2w0hsa/view?orgId=1' },
      { label: 'runbook', url: 'https://runbooks.example.org/shop/orders-per-minute' },
      { label: 'dashboard', url: 'https://grafana.example.org/d/shop-overview?orgId=1' },
      { label: 'panel', url: 'https://grafana.example.org/d/shop-overview?orgId=1&viewPanel=7' },
      { label: 'silence', url: 'https://grafana.example.org/alerting/silence/new?alertmanager=grafana&matcher=__alert_rule_uid__%3Dbdq8kz1r2w0hsa&orgId=1' },
      { label: 'image', url: 'https://grafana.example.org/public/img/attachments/9f2c1d0e.png' },
    ]);
    expect(orders!.refusedLinks).toBeUndefined();
  });

  it('keeps the value: `values` as name=value, else `valueString`', () => {
    const [orders, payments] = two().incidents;
    expect(orders!.value).toBe('A=0, B=14.2031');
    expect(payments!.value).toBe("[ var='A' labels={} value=no data ]");
  });

  it("says the notification's title and message for an alert that carries no text of its own, and never overrides an alert's own", () => {
    const [orders, payments] = two().incidents;
    expect(orders!.title).toBe('No orders recorded for 10 minutes');
    expect(orders!.message).toContain('The orders-per-minute query returned no data');
    expect(payments!.title).toBe('[FIRING:2] DatasourceNoData Shop (prom-shop A)');
    expect(payments!.message).toContain('rulename = Payments per minute');
  });

  it('keeps groupLabels, commonLabels and truncatedAlerts on the batch and on each incident', () => {
    const batch = two();
    const group = { labels: { alertname: 'DatasourceNoData', grafana_folder: 'Shop' }, truncatedAlerts: 0, receiver: 'reprise' };
    expect(batch.group).toMatchObject(group);
    expect(batch.group!.commonLabels).toMatchObject({ datasource_uid: 'prom-shop', ref_id: 'A' });
    for (const i of batch.incidents) expect(i.group).toBe(batch.group);
  });

  it('shows only links to allowed hosts, and says which were not shown', () => {
    const batch = parseGrafanaPayload(fixture('grafana-two-rules.json'), { links: { allowedHosts: ['runbooks.example.org'] } });
    const [orders] = batch.incidents;
    expect(orders!.links).toEqual([{ label: 'runbook', url: 'https://runbooks.example.org/shop/orders-per-minute' }]);
    expect(orders!.refusedLinks?.map((r) => r.field)).toEqual(['generatorURL', 'dashboardURL', 'panelURL', 'silenceURL', 'imageURL']);
    expect(batch.refusedLinks.filter((r) => r.alert === 0)).toHaveLength(5);
    expect(batch.refusedLinks.every((r) => r.reason === 'its host is not in links.allowed_hosts')).toBe(true);
  });
});

describe("a contact point's test notification", () => {
  it.each(['grafana-test-notification.json', 'grafana-test-notification-custom.json'])('%s is recognised: no incident, the reason said', (name) => {
    const batch = parseGrafanaPayload(fixture(name));
    expect(batch.incidents).toEqual([]);
    expect(batch.test).toMatchObject({ reason: expect.stringContaining('test notification'), receiver: 'reprise' });
  });

  it('is only the test: a real alert named TestAlert with more labels, or a body with a malformed alert, is parsed as alerts', () => {
    const real = JSON.parse(JSON.stringify(fixture('grafana-test-notification.json'))) as { alerts: Array<{ labels: Record<string, string> }> };
    real.alerts[0]!.labels['grafana_folder'] = 'Ops';
    expect(parseGrafanaPayload(real).incidents).toHaveLength(1);
    expect(() => parseGrafanaPayload({ receiver: 'reprise', alerts: [{ status: 'pending', labels: {} }] })).toThrow(/alerts\[0\]/);
  });

  it('is not recognised on the Alertmanager route: there a nameless alert stays an error', () => {
    expect(() => parseAlertmanagerPayload(fixture('grafana-test-notification-custom.json'))).toThrow(/alertname/);
  });
});
