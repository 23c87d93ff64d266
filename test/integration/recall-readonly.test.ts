/**
 * `reprise recall --store` only reads: it never writes the store it is pointed at (the running
 * bot is its one writer), and never creates one that is not there.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import { Ledger } from '../../src/core/ledger/ledger.js';
import { crashLoopPayload } from './helpers/alerts.js';
import { recallJson } from './helpers/recall-cli.js';
import { cleanup, makeTmpDir, runCli } from './helpers/spawn-bot.js';

afterEach(cleanup);

const digest = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('reprise recall --store', () => {
  it('reads a ledger without changing a byte of it', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const file = join(dir, 'reprise.sqlite');
    const store = createStore(`sqlite://${file}`, dir);
    const ledger = await Ledger.open(store, { resolveWindowMs: 86_400_000 });
    await ledger.record({
      type: 'feedback',
      triggerKey: 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1',
      user: 'ann',
      vote: 'up',
      at: '2026-11-30T00:00:00.000Z',
    });
    await ledger.close();
    await store.close();
    const before = digest(file);
    const [incident] = await recallJson(crashLoopPayload({ status: 'firing' }), { catalog: 'catalog', store: `sqlite://${file}`, dir });
    expect(incident!.answer).not.toBeNull();
    expect(digest(file)).toBe(before);
  });

  it('refuses a store that does not exist instead of creating it', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const file = join(dir, 'nope', 'reprise.sqlite');
    const alert = join(dir, 'alert.json');
    writeFileSync(alert, JSON.stringify(crashLoopPayload({ status: 'firing' })));
    const r = await runCli(['recall', '--catalog', 'catalog', '--store', `sqlite://${file}`, '--alert', alert, '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no ledger at .*reprise\.sqlite; check --store/);
    expect(existsSync(file)).toBe(false);
  });
});
