/**
 * A real Alertmanager (Debian's prometheus-alertmanager, installed by .ci/run) routes an alert
 * to the real `reprise serve`: what it sends — grouping, fingerprints, the v4 payload, the
 * resolve notification — is what the bot is built for. Skipped where the binary is missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CHECKOUT_ENTRY, SAMPLE_POD } from './helpers/alerts.js';
import { ledgerEvents } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

const BINARY = 'prometheus-alertmanager';
const installed = spawnSync('sh', ['-c', `command -v ${BINARY}`]).status === 0;

let am: ChildProcess | undefined;
afterEach(async () => {
  am?.kill('SIGKILL');
  am = undefined;
  await cleanup();
});

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

async function postAlerts(amUrl: string, endsAt: string): Promise<void> {
  const alert = {
    labels: { alertname: 'KubePodCrashLooping', namespace: 'payments', pod: SAMPLE_POD, container: 'checkout-api', cluster: 'prod-eu-1', severity: 'warning' },
    annotations: {
      summary: 'Pod is crash looping.',
      description: `Pod payments/${SAMPLE_POD} (container checkout-api) is in waiting state (reason: "CrashLoopBackOff").`,
    },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
    endsAt,
  };
  const res = await fetch(`${amUrl}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([alert]) });
  expect(res.status, await res.text()).toBe(200);
}

/** Starts the real Alertmanager routing everything to `webhook`; `prefix` puts its external URL (and routes) under a path. */
async function startAlertmanager(dir: string, webhook: string, opts: { groupBy: string[]; prefix?: string; maxAlerts?: number }): Promise<string> {
  const amPort = await freePort();
  const config = join(dir, 'alertmanager.yml');
  writeFileSync(
    config,
    [
      'route:',
      '  receiver: reprise',
      `  group_by: [${opts.groupBy.join(', ')}]`,
      '  group_wait: 1s',
      '  group_interval: 1s',
      '  repeat_interval: 1h',
      'receivers:',
      '  - name: reprise',
      '    webhook_configs:',
      `      - url: ${webhook}`,
      '        send_resolved: true',
      ...(opts.maxAlerts ? [`        max_alerts: ${opts.maxAlerts}`] : []),
      '',
    ].join('\n'),
  );
  const root = `http://127.0.0.1:${amPort}`;
  const external = opts.prefix ? `${root}${opts.prefix}` : root;
  am = spawn(
    BINARY,
    [
      `--config.file=${config}`,
      `--storage.path=${join(dir, 'am')}`,
      `--web.listen-address=127.0.0.1:${amPort}`,
      '--cluster.listen-address=',
      ...(opts.prefix ? [`--web.external-url=${external}`] : []),
    ],
    { stdio: 'ignore' },
  );
  await waitForReady(external);
  return external;
}

describe.runIf(installed)('a real Alertmanager delivering to reprise serve', () => {
  it(
    'keeps node alerts on two hosts apart (two triggers, two threads) and links the silence under its path-prefixed external URL',
    { timeout: 90_000 },
    async () => {
      const dir = makeTmpDir();
      const bot = await spawnBot({ dataDir: dir, transcript: join(dir, 't.jsonl') });
      const amUrl = await startAlertmanager(dir, `${bot.url}/webhook/alertmanager`, { groupBy: ['alertname', 'instance'], prefix: '/alertmanager' });
      const node = (host: string, free: string) => ({
        labels: {
          alertname: 'NodeFilesystemSpaceFillingUp',
          instance: `${host}:9100`,
          job: 'node-exporter',
          device: '/dev/sda1',
          fstype: 'ext4',
          mountpoint: '/var',
          severity: 'warning',
        },
        annotations: {
          summary: 'Filesystem is predicted to run out of space within the next 24 hours.',
          description: `Filesystem on /dev/sda1, mounted on /var, at ${host}:9100 has only ${free}% available space left and is filling up.`,
        },
        startsAt: new Date(Date.now() - 60_000).toISOString(),
        endsAt: new Date(Date.now() + 10 * 60_000).toISOString(),
      });
      const res = await fetch(`${amUrl}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([node('node1', '14.2'), node('node2', '9.8')]),
      });
      expect(res.status, await res.text()).toBe(200);

      const lines = await bot.waitForTranscript((ls) => ls.filter((l) => l.kind === 'rca').length >= 2, 30_000);
      const cards = lines.filter((l) => l.kind === 'rca');
      expect(cards).toHaveLength(2);
      expect(new Set(cards.map((c) => c.threadId)).size).toBe(2);
      expect(cards.map((c) => c.triggerKey).sort()).toEqual(['nodefilesystemspacefillingup||host|node1|', 'nodefilesystemspacefillingup||host|node2|']);
      const one = cards.find((c) => c.triggerKey.includes('node1'))!;
      expect(one.text.split('\n')[0]).toBe('🔍 NodeFilesystemSpaceFillingUp — node1 · severity warning · 🚨 firing');
      // Summary and description both: the 14.2% is on the card.
      expect(one.text).toContain('Filesystem is predicted to run out of space within the next 24 hours.');
      expect(one.text).toContain('has only 14.2% available space left');
      // The silence link is on the Alertmanager that sent it, under its path prefix, matching this host.
      const silence = /silence (\S+)/.exec(one.text)?.[1];
      expect(silence?.startsWith(`${amUrl}/#/silences/new?filter=`), silence).toBe(true);
      expect(decodeURIComponent(silence!.split('filter=')[1]!)).toContain('instance="node1:9100"');
      // …where that Alertmanager really serves its UI.
      expect((await fetch(`${amUrl}/`)).status).toBe(200);
      await bot.stop();
    },
  );

  const nodeAlert = (alertname: string, host: string, endsAt: string) => ({
    labels: { alertname, instance: `${host}:9100`, job: 'node-exporter', severity: 'warning' },
    annotations: { summary: `${alertname} on ${host}.` },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
    endsAt,
  });
  const send = async (amUrl: string, alerts: unknown[]): Promise<void> => {
    const res = await fetch(`${amUrl}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alerts) });
    expect(res.status, await res.text()).toBe(200);
  };
  const later = (): string => new Date(Date.now() + 10 * 60_000).toISOString();

  it('makes a group bigger than max_alerts one thread, each alert sent its own open, and says what Alertmanager left out', { timeout: 90_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir, transcript: join(dir, 't.jsonl') });
    const amUrl = await startAlertmanager(dir, `${bot.url}/webhook/alertmanager`, { groupBy: ['alertname'], maxAlerts: 3 });
    const hosts = ['node1', 'node2', 'node3', 'node4', 'node5'];
    await send(
      amUrl,
      hosts.map((h) => nodeAlert('NodeClockNotSynchronising', h, later())),
    );
    // This group's notification that carries all five (Alertmanager may flush a group it is still
    // filling, with fewer; the next flush a second later has them all).
    const parsed = await bot.waitForLog(
      (l) =>
        l.msg === 'alertmanager webhook parsed' &&
        String(l['groupKey']).includes('NodeClockNotSynchronising') &&
        l['truncatedAlerts'] !== undefined &&
        l['truncatedAlerts'] !== 0,
      30_000,
    );
    expect(parsed).toMatchObject({ alerts: 3, truncatedAlerts: 2 });
    // One thread: the first card at once, the others folded into it in place, the truncation said.
    const lines = await bot.waitForTranscript(
      (ls) => ls.some((l) => l.kind === 'update' && l.text.includes('Alertmanager group: 3 alerts (3 firing)')),
      30_000,
    );
    const cards = lines.filter((l) => l.kind === 'rca');
    expect(cards).toHaveLength(1);
    expect(cards[0]!.text).toContain('Alertmanager left out 2 alerts of this group');
    expect(lines.filter((l) => l.kind === 'update').every((l) => l.threadId === cards[0]!.threadId)).toBe(true);
    expect(lines.find((l) => l.kind === 'update' && l.text.includes('3 alerts (3 firing)'))!.text).toContain('Alertmanager left out 2 alerts of this group');
    expect(await bot.waitForLog((l) => l.truncatedAlerts === 2 && String(l.msg).startsWith('Alertmanager left out 2 alerts'), 10_000)).toBeDefined();
    const opens = (await ledgerEvents(dir)).filter((e) => e.type === 'open');
    expect(opens).toHaveLength(3);
    expect(new Set(opens.map((e) => e['triggerKey'])).size).toBe(3);
    await bot.stop();
  });

  it('resolves a group alert by alert: the card counts what resolved, and reads resolved once all have', { timeout: 90_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir, transcript: join(dir, 't.jsonl') });
    const amUrl = await startAlertmanager(dir, `${bot.url}/webhook/alertmanager`, { groupBy: ['alertname'] });
    const hosts = ['node1', 'node2', 'node3'];
    await send(
      amUrl,
      hosts.map((h) => nodeAlert('NodeDiskIOSaturation', h, later())),
    );
    await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'update' && l.text.includes('3 alerts (3 firing)')), 30_000);
    // One host recovers: Alertmanager sends the group again with that alert resolved.
    await send(amUrl, [nodeAlert('NodeDiskIOSaturation', 'node1', new Date().toISOString())]);
    const partial = await bot.waitForTranscript((ls) => ls.some((l) => l.text.includes('3 alerts (2 firing, 1 resolved)')), 30_000);
    expect(partial.filter((l) => l.kind === 'rca')).toHaveLength(1);
    expect(partial.some((l) => /✅ resolved/.test(l.text))).toBe(false);
    await send(
      amUrl,
      ['node2', 'node3'].map((h) => nodeAlert('NodeDiskIOSaturation', h, new Date().toISOString())),
    );
    const done = await bot.waitForTranscript((ls) => ls.some((l) => /all 3 alerts resolved/.test(l.text)), 30_000);
    expect(done.filter((l) => l.kind === 'rca')).toHaveLength(1);
    const events = await ledgerEvents(dir);
    expect(events.filter((e) => e.type === 'resolve').map((e) => e['fingerprint'])).toHaveLength(3);
    await bot.stop();
  });

  it('delivers the firing (instant recall) and then the resolve into the same thread', { timeout: 90_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir, transcript: join(dir, 't.jsonl') });
    const amUrl = await startAlertmanager(dir, `${bot.url}/webhook/alertmanager`, { groupBy: ['alertname', 'namespace'] });

    await postAlerts(amUrl, new Date(Date.now() + 10 * 60_000).toISOString());
    const rca = await waitFor(() => bot.transcriptLines().find((l) => l.kind === 'rca'), { what: 'the RCA thread from Alertmanager', timeoutMs: 30_000 });
    expect(rca.answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });
    expect(rca.text).toContain('🔍 KubePodCrashLooping — prod-eu-1/payments/checkout-api');

    await postAlerts(amUrl, new Date().toISOString());
    const resolved = await waitFor(() => bot.transcriptLines().find((l) => l.kind === 'resolved'), {
      what: 'the resolve from Alertmanager',
      timeoutMs: 30_000,
    });
    expect(resolved.threadId).toBe(rca.threadId);
    expect(resolved.text).toMatch(/✅ resolved after \d+ min/);
    // Alertmanager may re-send the firing group before the resolve: still one thread.
    expect(bot.transcriptLines().filter((l) => l.kind === 'rca')).toHaveLength(1);
  });
});

/** Alertmanager answers `/-/ready` (a connection refused while it starts counts as not yet). */
async function waitForReady(amUrl: string): Promise<void> {
  await waitFor(async () => (await fetch(`${amUrl}/-/ready`)).ok, `Alertmanager ready at ${amUrl}`);
}
