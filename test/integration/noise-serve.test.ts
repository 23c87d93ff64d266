/**
 * Noise control through `reprise serve` (issue 12). Holding is durable: a firing acknowledged
 * (202) and held by the debounce survives a `kill -9` — the hold is in the ledger, and the next
 * start releases it into a thread once its window has lapsed. A storm from one Alertmanager group
 * becomes a few threads, each alert keeping its own open so each resolve pairs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { crashLoopPayload, postAlert, type WebhookAccepted } from './helpers/alerts.js';
import { ledgerEvents, ofType, writeConfig } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot } from './helpers/spawn-bot.js';

afterEach(cleanup);

describe('a held firing across a crash', () => {
  it('is released after the restart, posted once, and recorded as hold → release → open', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const config = writeConfig(dir, 'trigger:\n  debounce: 2s\n');
    const first = await spawnBot({ dataDir: dir, args: ['--config', config], process: true }); // killed below
    const res = await postAlert(first.url, crashLoopPayload({ status: 'firing' }));
    expect(res.status, res.text).toBe(202);
    expect((res.json as WebhookAccepted).results[0]).toMatchObject({ status: 'held' });
    await first.kill();
    expect(first.transcriptLines()).toEqual([]);

    const second = await spawnBot({ dataDir: dir, args: ['--config', config] });
    const lines = await second.waitForTranscript((ls) => ls.some((l) => l.kind === 'rca'), 20_000);
    expect(lines.filter((l) => l.kind === 'rca')).toHaveLength(1);
    const resolved = await postAlert(second.url, crashLoopPayload({ status: 'resolved' }));
    expect((resolved.json as WebhookAccepted).results[0]).toMatchObject({ status: 'resolved', paired: true });
    await second.stop();
    const rows = await ledgerEvents(dir);
    expect(ofType(rows, 'noise').map((r) => `${String(r['action'])}:${String(r['reason'])}`)).toEqual(['hold:debounce', 'release:debounce']);
    expect(ofType(rows, 'open')).toHaveLength(1);
  });
});

describe('a storm through reprise serve', () => {
  it('turns a 200-alert Alertmanager group into one thread with 200 opens, and pairs every resolve', { timeout: 90_000 }, async () => {
    const dir = makeTmpDir();
    const config = writeConfig(dir, 'trigger:\n  coalesce:\n    enabled: true\n');
    const bot = await spawnBot({ dataDir: dir, args: ['--config', config] });
    const one = crashLoopPayload({ status: 'firing' }) as { alerts: Array<Record<string, unknown>> };
    const template = one.alerts[0]!;
    const alerts = Array.from({ length: 200 }, (_, i) => ({
      ...template,
      fingerprint: `storm-${i}`,
      labels: { ...(template['labels'] as object), pod: `svc${i}-7d9f8c6b5-abcde` },
    }));
    const res = await postAlert(bot.url, { ...one, alerts });
    expect(res.status, res.text.slice(0, 300)).toBe(202);
    const statuses = (res.json as WebhookAccepted).results.map((r) => (r as { status: string }).status);
    expect(statuses.filter((s) => s === 'posted')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'merged')).toHaveLength(199);
    await bot.waitForTranscript((ls) => ls.filter((l) => l.kind === 'rca').length === 1);
    const resolved = await postAlert(bot.url, {
      ...one,
      status: 'resolved',
      alerts: alerts.map((a) => ({ ...a, status: 'resolved', endsAt: new Date().toISOString() })),
    });
    expect((resolved.json as WebhookAccepted).results.filter((r) => (r as { paired?: boolean }).paired)).toHaveLength(200);
    await bot.waitForTranscript((ls) => ls.filter((l) => l.kind === 'resolved').length === 1);
    await bot.stop();
    const rows = await ledgerEvents(dir);
    expect(ofType(rows, 'open')).toHaveLength(200);
    expect(ofType(rows, 'open').filter((r) => r['threadOf'] !== undefined)).toHaveLength(199);
    expect(ofType(rows, 'resolve')).toHaveLength(200);
  });
});
