/**
 * Store schema version 2 (issue 19 item 1), on a store written by the build before it (schema
 * v1, `test/fixtures/ledger-v1`): the writer migrates it, every read stays as it was, Kubernetes
 * alerts keep their trigger keys (history, silences and votes carry on), and the coarse keys the
 * old identity gave hosts and Grafana rules stay as written while new alerts get their own.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';
import type { OpenEvent } from '../../../src/core/ledger-events.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import { readLedgerRecords } from '../../../src/core/ledger/ledger-records.js';
import { verifyLedger } from '../../../src/core/ledger/ledger-verify.js';
import { IDENTITY_KEY, readStoreSchema, STORE_SCHEMA_KEY, STORE_SCHEMA_VERSION, type StoreSchemaRecord } from '../../../src/core/ledger/store-schema.js';
import { parsePagerDutyPayload } from '../../../src/core/pagerduty.js';
import type { Incident } from '../../../src/core/types.js';
import type { KeyValueStore } from '../../../src/ports/store.js';

const FIXTURE = new URL('../../fixtures/ledger-v1/reprise.sqlite', import.meta.url).pathname;
const ALERTS: Array<{ name: string; alert?: unknown; pagerduty?: unknown }> = JSON.parse(
  readFileSync(new URL('../../fixtures/ledger-v1/alerts.json', import.meta.url), 'utf8'),
);

/** The fixture's alerts as this build keys them. */
function incidentNamed(name: string): Incident {
  const a = ALERTS.find((x) => x.name === name)!;
  if (a.pagerduty) {
    const p = parsePagerDutyPayload(a.pagerduty);
    if (p.kind !== 'incident') throw new Error('not an incident');
    return p.incident;
  }
  return parseAlertmanagerPayload({ alerts: [a.alert] }).incidents[0]!;
}

let dir: string;
const open: KeyValueStore[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-schema-v1-'));
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

async function fixtureStore(): Promise<KeyValueStore> {
  const file = join(dir, 'reprise.sqlite');
  copyFileSync(FIXTURE, file);
  const s = createStore(`sqlite://${file}`, dir);
  open.push(s);
  return s;
}

async function opens(s: KeyValueStore): Promise<Map<string, OpenEvent>> {
  const out = new Map<string, OpenEvent>();
  for await (const r of readLedgerRecords(s)) if ('event' in r && r.event.type === 'open') out.set(r.event.fingerprint, r.event);
  return out;
}

const NOW = new Date('2026-12-01T00:00:00Z');

function reads(l: Ledger, keys: string[]): unknown {
  return JSON.parse(JSON.stringify({ seq: l.seq, triggers: keys.map((t) => [t, l.read.occurrences(t), l.read.silence(t, NOW), l.read.recentEpisodes(t)]) }));
}

describe('a store written at schema version 1', () => {
  it('is migrated to version 2 by its writer, reads the same, and records where the new keys begin', async () => {
    const s = await fixtureStore();
    const before = await readStoreSchema(s);
    expect(before).toMatchObject({ version: 1, recorded: true });
    expect(before.pending.map((m) => `${m.from}→${m.to}`)).toEqual(['1→2']);
    expect(before.pending[0]?.readsUnmigrated).toBe(true);

    const stored = [...(await opens(s)).values()].map((o) => o.triggerKey);
    const reader = await Ledger.open(s);
    const readBefore = reads(reader, stored);
    expect(await s.get(IDENTITY_KEY), 'a reader writes nothing').toBeUndefined();

    const writer = await Ledger.open(s, { migrate: true });
    const rec = await s.get<StoreSchemaRecord>(STORE_SCHEMA_KEY);
    expect(rec?.version).toBe(STORE_SCHEMA_VERSION);
    expect(rec?.migrated?.map((m) => [m.from, m.to])).toEqual([[1, 2]]);
    expect(await s.get(IDENTITY_KEY)).toMatchObject({ version: 2, lastV1Seq: writer.seq });
    expect(reads(writer, stored)).toEqual(readBefore);
    const v = await verifyLedger(s);
    expect(v.corrupt).toEqual([]);
    // The fixture's snapshot may be of an older state version (ignored at load, rebuilt from events); never a mismatch.
    expect(['match', 'old_format']).toContain(v.snapshot);
    await writer.close();
    // Run again (a crash after the step, before the version was recorded): nothing changes.
    const again = await Ledger.open(s, { migrate: true });
    expect(await s.get(IDENTITY_KEY)).toMatchObject({ lastV1Seq: again.seq });
    await again.close();
  });

  it('Kubernetes alerts keep their keys: history, the resolve and the trigger carry on', async () => {
    const s = await fixtureStore();
    const stored = await opens(s);
    const l = await Ledger.open(s, { migrate: true });
    for (const name of ['web-crashloop', 'db-not-ready']) {
      const i = incidentNamed(name);
      expect(i.triggerKey, name).toBe(stored.get(i.fingerprint)?.triggerKey);
      expect(l.read.occurrences(i.triggerKey).count, name).toBe(1);
    }
    expect(l.read.occurrences(incidentNamed('web-crashloop').triggerKey).resolved).toBe(1);
    await l.close();
  });

  it('hosts and Grafana rules that shared one coarse key get their own; the old key and its 🔕 stay as written', async () => {
    const s = await fixtureStore();
    const stored = await opens(s);
    const l = await Ledger.open(s, { migrate: true });
    const [n1, n2] = [incidentNamed('node1-disk'), incidentNamed('node2-disk')];
    const coarse = stored.get(n1.fingerprint)!.triggerKey;
    expect(coarse).toBe('nodefilesystemspacefillingup||||');
    expect(stored.get(n2.fingerprint)!.triggerKey).toBe(coarse);
    expect(n1.triggerKey).toBe('nodefilesystemspacefillingup||host|node1|');
    expect(n2.triggerKey).toBe('nodefilesystemspacefillingup||host|node2|');
    // The old history and silence are readable under the old key…
    expect(l.read.occurrences(coarse).count).toBe(2);
    expect(l.read.silence(coarse, NOW)).toMatchObject({ active: true });
    // …and the new keys start fresh: that silence covered every host, and no one chose that per host.
    for (const i of [n1, n2]) {
      expect(l.read.occurrences(i.triggerKey).count).toBe(0);
      expect(l.read.silence(i.triggerKey, NOW)).toMatchObject({ active: false });
    }
    const [g1, g2] = [incidentNamed('grafana-nodata-orders'), incidentNamed('grafana-nodata-logins')];
    expect(stored.get(g1.fingerprint)!.triggerKey).toBe(stored.get(g2.fingerprint)!.triggerKey);
    expect(g1.triggerKey).not.toBe(g2.triggerKey);
    const pd = incidentNamed('pagerduty-checkout');
    expect(stored.get(pd.fingerprint)!.triggerKey).toBe('checkout-api pods crash looping in payments||service|checkout-api|');
    expect(pd.triggerKey).toBe('checkout-api pods crash looping in payments||pagerduty_service|pf9kmxh|');
    await l.close();
  });
});
