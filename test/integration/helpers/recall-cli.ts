/** `reprise recall --json` run as a child process, its output typed. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { GateTraceStep, IncidentIdentity, Workload } from '../../../src/core/types.js';
import { runCli } from './spawn-bot.js';

export interface RecallJsonIncident {
  triggerKey: string;
  fingerprint: string;
  answer: { kind: 'incident' | 'runbook'; entry: string; confidence: number } | null;
  nearMiss: { entry: string; gate: string; reason: string } | null;
  trace: GateTraceStep[];
  /** Which labels made the identity (and so the trigger key), and the workload recall compared. */
  identity: IncidentIdentity & { workload?: Workload };
}

export interface RecallCliOptions {
  catalog: string;
  /** Store URL (`sqlite:///abs/file`); omitted = an empty track record. */
  store?: string;
  /** Folder to write the payload file into. */
  dir: string;
  /** Base name of the payload file (unique per call in one folder). */
  name?: string;
  cwd?: string;
  /** Config file (`--config`), e.g. for a short ledger.resolve_window. */
  config?: string;
}

/**
 * Writes `payload` to a file and runs `reprise recall --catalog … [--store …] --alert FILE --json`.
 * Asserts exit 0 and returns the incidents.
 */
export async function recallJson(payload: unknown, o: RecallCliOptions): Promise<RecallJsonIncident[]> {
  const file = join(o.dir, `${o.name ?? 'alert'}.json`);
  writeFileSync(file, JSON.stringify(payload));
  const args = [
    'recall',
    '--catalog',
    o.catalog,
    ...(o.store ? ['--store', o.store] : []),
    ...(o.config ? ['--config', o.config] : []),
    '--alert',
    file,
    '--json',
  ];
  const r = await runCli(args, o.cwd ? { cwd: o.cwd } : {});
  expect(r.code, `reprise ${args.join(' ')}\nstderr:\n${r.stderr}`).toBe(0);
  return (JSON.parse(r.stdout) as { incidents: RecallJsonIncident[] }).incidents;
}
