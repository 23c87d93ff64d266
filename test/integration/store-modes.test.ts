/**
 * A store nobody else can read (issue 20 item 6), with the real `reprise serve` under the
 * default umask (022): the data folder it creates is 0700 and every file in it — the SQLite
 * database, its WAL and shared memory, the lock, the control socket, serve.json, the transcript,
 * an export — 0600. `doctor` reports anything looser with the fix, and the next `serve` tightens
 * the store's own files again.
 */
import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { cleanup, makeTmpDir, runCli, spawnBot } from './helpers/spawn-bot.js';

const mode = (p: string): number => lstatSync(p).mode & 0o777;
let previous: number;

beforeAll(() => {
  previous = process.umask(0o022);
});
afterAll(async () => {
  process.umask(previous);
  await cleanup();
});

describe('file modes under umask 022', () => {
  it('serve creates the data dir 0700 and every file 0600; doctor reports looser modes with the fix', { timeout: 120_000 }, async () => {
    const parent = makeTmpDir();
    const dataDir = join(parent, 'nested', 'data');
    const bot = await spawnBot({ dataDir });
    const res = await postAlert(bot.url, crashLoopPayload({ status: 'firing' }));
    expect(res.status, res.text).toBe(202);
    await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'rca'));
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(parent, 'nested'))).toBe(0o700);
    const names = readdirSync(dataDir).sort();
    for (const f of ['reprise.sqlite', 'reprise.sqlite-wal', 'reprise.sqlite-shm', 'reprise.sqlite.lock', 'reprise.sock', 'serve.json', 't.jsonl'])
      expect(names).toContain(f);
    for (const f of names) expect([f, mode(join(dataDir, f)).toString(8)]).toEqual([f, '600']);
    await bot.stop();

    const out = join(dataDir, 'backup.jsonl');
    const exported = await runCli(['ledger', 'export', '--out', out], { env: { REPRISE_DATA_DIR: dataDir }, timeoutMs: 60_000 });
    expect(exported.code, exported.stderr).toBe(0);
    expect(mode(out)).toBe(0o600);

    const fine = await runCli(['doctor'], { env: { REPRISE_DATA_DIR: dataDir }, timeoutMs: 60_000 });
    expect(fine.stdout).toMatch(/^✓ file modes: .* readable by their owner only$/m);

    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, 'reprise.sqlite'), 0o644);
    const loose = await runCli(['doctor'], { env: { REPRISE_DATA_DIR: dataDir }, timeoutMs: 60_000 });
    expect(loose.code).toBe(1);
    const line = loose.stdout.split('\n').find((l) => l.startsWith('✗ file modes:')) ?? loose.stdout;
    expect(line).toContain(`${dataDir} (0755)`);
    expect(line).toContain(`${join(dataDir, 'reprise.sqlite')} (0644)`);
    expect(line).toContain(`fix: chmod 700 ${dataDir} && chmod 600 ${join(dataDir, 'reprise.sqlite')}`);

    // The next serve tightens the store's files and says what is left for the operator.
    const again = await spawnBot({ dataDir });
    expect(mode(join(dataDir, 'reprise.sqlite'))).toBe(0o600);
    await again.waitForLog((l) => typeof l.msg === 'string' && l.msg === `others can read ${dataDir} (mode 0755); fix: chmod 700 ${dataDir}`);
    await again.stop();
  });
});
