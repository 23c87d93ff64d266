/**
 * Holding is durable (issue 12): a firing acknowledged (202) and held by the debounce survives a
 * `kill -9` of `reprise serve` — the hold is in the ledger, and the next start releases it into
 * a thread once its window has lapsed. Its resolve, held or not, still pairs.
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
    const first = await spawnBot({ dataDir: dir, args: ['--config', config] });
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
