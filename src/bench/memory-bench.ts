import { runChildJson } from './child-process.js';

export const MEM_ENGINES = ['flex', 'fullScan', 'miniSearch'] as const;
export type MemEngine = (typeof MEM_ENGINES)[number];

/** What `mem-child` measured for one (engine, size). */
export interface MemResult {
  engine: MemEngine;
  size: number;
  /** Resident memory the index added (after GC), MB. */
  rssDeltaMb: number;
  heapDeltaMb: number;
  /** RSS of the whole process with catalog and index loaded, MB. */
  rssTotalMb: number;
  gcExposed: boolean;
}

/**
 * One fresh `--expose-gc` process per (engine, size): RSS never shrinks back reliably within a
 * process, so measuring engines side by side would bill one engine's pages to the next.
 */
export async function runMemoryBench(sizes: readonly number[], log: (line: string) => void): Promise<MemResult[]> {
  const out: MemResult[] = [];
  for (const size of sizes) {
    for (const engine of MEM_ENGINES) {
      const r = await runChildJson<MemResult>('mem-child', [engine, String(size)], ['--expose-gc']);
      log(`  memory ${engine} @ ${size}: +${r.rssDeltaMb} MB RSS, +${r.heapDeltaMb} MB heap`);
      out.push(r);
    }
  }
  return out;
}
