/**
 * `openStore(config, mode)`: the one way to open the configured store. A writer can write; a
 * reader beside the bot reads what the writer wrote and can never write (sqlite refuses it), and
 * `url` reads another store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { openStore } from '../../../src/runtime/open-store.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-open-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const config = (url?: string) => configSchema.parse({ store: { data_dir: dir, ...(url ? { url } : {}) } });

describe('openStore', () => {
  it('opens the embedded store for writing, and for reading without the right to write', async () => {
    const writer = openStore(config(), 'write');
    await writer.set('k', { v: 1 });
    const reader = openStore(config(), 'read');
    expect(await reader.get('k')).toEqual({ v: 1 });
    await expect(reader.set('k', { v: 2 })).rejects.toThrow();
    expect(await writer.get('k')).toEqual({ v: 1 });
    await reader.close();
    await writer.close();
  });

  it('reads another store when given its URL', async () => {
    const url = `sqlite://${join(dir, 'other.sqlite')}`;
    const other = openStore(config(), 'write', url);
    await other.set('x', 'other');
    await other.close();
    const reader = openStore(config(), 'read', url);
    expect(await reader.get('x')).toBe('other');
    await reader.close();
  });

  it('refuses a store URL it does not know, saying which it takes', () => {
    expect(() => openStore(config(), 'write', 'ftp://x')).toThrow(/unsupported store URL .*use sqlite:\/\/<file>/);
  });
});
