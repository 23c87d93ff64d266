/**
 * A real crash: a child process appends to a sqlite-backed ledger and is SIGKILLed mid-stream.
 * Everything it acknowledged must be there after reopening, and the reopened state must equal a
 * full replay. The child runs our TypeScript sources directly through Node's type stripping,
 * with a resolve hook mapping the `.js` import suffixes to the `.ts` files.
 */
import { stateDigest } from '../../../src/core/ledger/ledger-export-format.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { Ledger, eventKey } from '../../../src/core/ledger/ledger.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { randomEvents } from './random-events.js';

const features = process.features as { typescript?: string | false };
const canStripTypes = Boolean(features.typescript);

const HOOK = `
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && /^\\.{1,2}\\//.test(specifier) && specifier.endsWith('.js')) {
      return next(specifier.slice(0, -3) + '.ts', context);
    }
    throw err;
  }
}`;

const CHILD = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));
const [storeUrl, dataDir, seed, count] = process.argv.slice(2);
const { createStore } = await import(process.env.STORE_MODULE);
const { Ledger } = await import(process.env.LEDGER_MODULE);
const { randomEvents } = await import(process.env.EVENTS_MODULE);
const ledger = await Ledger.open(createStore(storeUrl, dataDir), { snapshotEvery: 25 });
const events = randomEvents(Number(count), Number(seed));
process.stdout.write('ready\\n');
// Bursts of concurrent appends: the seq an append reports is what the bot would acknowledge.
for (let i = 0; i < events.length; i += 4) {
  await Promise.all(events.slice(i, i + 4).map(async (e) => process.stdout.write(String(await ledger.append(e)) + '\\n')));
}
process.stdout.write('done\\n');
`;

const TOTAL = 20_000;
const SEED = 99;
const KILL_AFTER = 300;

let dir: string;
const stores: KeyValueStore[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-crash-'));
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Run the child until it has acknowledged at least KILL_AFTER events, SIGKILL it, return the max acked seq. */
function runAndKill(storeUrl: string): Promise<{ acked: number; stderr: string }> {
  const script = join(dir, 'child.mjs');
  writeFileSync(script, CHILD);
  const child = spawn(process.execPath, [script, storeUrl, dir, String(SEED), String(TOTAL)], {
    env: {
      ...process.env,
      NODE_NO_WARNINGS: '1',
      STORE_MODULE: new URL('../../../src/adapters/keyv/keyv-store.ts', import.meta.url).href,
      LEDGER_MODULE: new URL('../../../src/core/ledger/ledger.ts', import.meta.url).href,
      EVENTS_MODULE: new URL('./random-events.ts', import.meta.url).href,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let acked = 0;
    let buffer = '';
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        const n = Number(line);
        // Only what was reported before the kill counts as acknowledged.
        if (!killed && Number.isInteger(n) && n > acked) acked = n;
      }
      if (!killed && acked >= KILL_AFTER) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve({ acked, stderr });
      else reject(new Error(`child exited ${code} before the kill:\n${stderr}`));
    });
  });
}

describe('ledger crash safety', () => {
  it.skipIf(!canStripTypes)('keeps every acknowledged event across a SIGKILL mid-stream', async () => {
    const url = `sqlite://${join(dir, 'ledger.sqlite')}`;
    const { acked } = await runAndKill(url);
    expect(acked).toBeGreaterThanOrEqual(KILL_AFTER);

    const store = createStore(url, dir);
    stores.push(store);
    const ledger = await Ledger.open(store, { snapshotEvery: 25 });
    expect(ledger.seq).toBeGreaterThanOrEqual(acked);
    expect(ledger.seq).toBeLessThan(TOTAL);

    const expected = randomEvents(TOTAL, SEED).slice(0, ledger.seq);
    const keys = expected.map((_, i) => eventKey(i + 1));
    expect(await store.getMany(keys)).toEqual(expected);
    expect(ledger.read.digest()).toBe(stateDigest(await Ledger.replayAll(store)));
    expect(ledger.read.aggregates().applied).toBe(ledger.seq);
    expect(ledger.read.skipped).toBe(0);

    // and the reopened ledger carries on where the child stopped
    expect(await ledger.append(expected[0]!)).toBe(ledger.seq);
  });
});
