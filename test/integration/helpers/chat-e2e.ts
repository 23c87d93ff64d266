/**
 * What the end-to-end chat tests share: a config file with two routing rules, the ledger read
 * through the CLI, and alerts for a second namespace.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crashLoopPayload, type CrashLoopOptions } from './alerts.js';
import { waitFor } from '../../helpers/wait-for.js';
import { runCli } from './spawn-bot.js';

export type LedgerRow = Record<string, unknown> & { seq: number; type: string };

/** Every ledger event, through `reprise ledger events --json` (it reads beside a running bot). */
export async function ledgerEvents(dataDir: string, env: Record<string, string> = {}): Promise<LedgerRow[]> {
  const r = await runCli(['ledger', 'events', '--json'], { env: { REPRISE_DATA_DIR: dataDir, ...env } });
  if (r.code !== 0) throw new Error(`reprise ledger events failed: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LedgerRow);
}

export const ofType = (rows: readonly LedgerRow[], type: string): LedgerRow[] => rows.filter((r) => r.type === type);

/** @deprecated Use `waitFor(probe, { what, timeoutMs })` from test/helpers/wait-for.ts (kept for branches not yet merged). */
export const until = <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs?: number): Promise<T> => waitFor(probe, what, timeoutMs);

/** Waits until the ledger holds at least `n` events of `type`, and returns them. */
export const eventsOf = (dataDir: string, type: string, n: number): Promise<LedgerRow[]> =>
  waitFor(async () => {
    const rows = ofType(await ledgerEvents(dataDir), type);
    return rows.length >= n ? rows : undefined;
  }, `${n} ${type} event(s)`);

/**
 * Waits until every outbox item the ledger holds has its outcome recorded (`delivered` or
 * `outbox_failed`), and returns the events: a count taken then is not raced by a delivery of
 * what an earlier step did (a message can be on the surface before its `delivered` is written).
 */
export const settledEvents = (dataDir: string): Promise<LedgerRow[]> =>
  waitFor(async () => {
    const rows = await ledgerEvents(dataDir);
    const done = new Set(rows.flatMap((r) => (r.type === 'delivered' ? [r['outboxId']] : r.type === 'outbox_failed' ? [r['id']] : [])));
    return ofType(rows, 'outbox').every((o) => done.has(o['id'])) ? rows : undefined;
  }, 'every outbox item delivered or given up');

/** Writes `reprise.yaml` in `dir` and returns its path. */
export function writeConfig(dir: string, yaml: string): string {
  const file = join(dir, 'reprise.yaml');
  writeFileSync(file, yaml);
  return file;
}

/**
 * The crash-loop alert in another namespace (a different trigger, a fall-through: nothing in the
 * starter catalog covers it), with hostile annotations when asked.
 */
export function searchPayload(o: CrashLoopOptions & { annotations?: Record<string, string> }): Record<string, unknown> {
  const p = crashLoopPayload({ ...o, pod: o.pod ?? 'indexer-5c7d9-abcde' }) as {
    commonLabels: Record<string, string>;
    alerts: Array<{ labels: Record<string, string>; annotations: Record<string, string> }>;
  };
  for (const a of p.alerts) {
    a.labels = { ...a.labels, namespace: 'search', container: 'indexer' };
    if (o.annotations) a.annotations = o.annotations;
  }
  p.commonLabels = { ...p.commonLabels, namespace: 'search', container: 'indexer' };
  return p;
}

/** Annotations that would notify, link or run something if any surface treated them as markup. */
export const HOSTILE_ANNOTATIONS = {
  summary: '<!channel> @room @here the indexer is down',
  description: '<script>alert(1)</script> <a href="https://evil.example/">click</a> *bold* <@U0BOSS> [x](https://evil.example/)',
};
