/**
 * The grooming audit log: every planned or taken sweep action, appended to the store's own
 * append-only log (beside the ledger, never rewritten). Each record carries the hash of the
 * previous one, so an edit or a deletion in the middle shows on `reprise curate log --verify`.
 */
import { createHash } from 'node:crypto';
import { CorruptRecordError, logKey, type KeyValueStore, type LogKeys } from '../../ports/store.js';
import type { AuditRecord } from './curate-types.js';

export const CURATE_LOG: LogKeys = { headKey: 'curate:seq', prefix: 'curate:ev:', pad: 12 };

/** A stored audit line: the record, its place, and the chain. */
export interface StoredAudit extends AuditRecord {
  seq: number;
  prev: string;
  hash: string;
}

const GENESIS = '0'.repeat(64);

function hashOf(prev: string, r: AuditRecord): string {
  return createHash('sha256').update(prev).update('\n').update(JSON.stringify(r)).digest('hex');
}

function recordOf(s: StoredAudit): AuditRecord {
  const { seq: _seq, prev: _prev, hash: _hash, ...r } = s;
  return r;
}

async function head(store: KeyValueStore): Promise<number> {
  const h = await store.get<unknown>(CURATE_LOG.headKey);
  return typeof h === 'number' && Number.isSafeInteger(h) && h >= 0 ? h : 0;
}

export class CurateAudit {
  readonly #store: KeyValueStore;
  /** Appends are serialised so the chain stays linear. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(store: KeyValueStore) {
    this.#store = store;
  }

  /** Appends records in order; resolves once they are stored. */
  append(records: readonly AuditRecord[]): Promise<void> {
    const run = this.#queue.then(async () => {
      if (records.length === 0) return;
      const n = await head(this.#store);
      const last = n > 0 ? await this.#store.get<StoredAudit>(logKey(CURATE_LOG, n)).catch(() => undefined) : undefined;
      let prev = last?.hash ?? GENESIS;
      const stored: StoredAudit[] = records.map((r, i) => {
        const hash = hashOf(prev, r);
        const s = { ...r, seq: n + 1 + i, prev, hash };
        prev = hash;
        return s;
      });
      await this.#store.appendLog(CURATE_LOG, stored);
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Every record, oldest first; an unreadable one is reported, never fatal. */
  async read(): Promise<Array<StoredAudit | { seq: number; corrupt: string }>> {
    const n = await head(this.#store);
    const out: Array<StoredAudit | { seq: number; corrupt: string }> = [];
    for (let s = 1; s <= n; s++) {
      try {
        const v = await this.#store.get<StoredAudit>(logKey(CURATE_LOG, s));
        out.push(v === undefined ? { seq: s, corrupt: 'record is missing' } : v);
      } catch (err) {
        out.push({ seq: s, corrupt: err instanceof CorruptRecordError ? err.message : String(err) });
      }
    }
    return out;
  }

  /** Checks the chain: the first broken link, or undefined when every record follows the last. */
  async verify(): Promise<{ seq: number; problem: string } | undefined> {
    let prev = GENESIS;
    for (const r of await this.read()) {
      if ('corrupt' in r) return { seq: r.seq, problem: r.corrupt };
      if (r.prev !== prev) return { seq: r.seq, problem: 'does not follow the record before it (a record was removed or reordered)' };
      if (hashOf(prev, recordOf(r)) !== r.hash) return { seq: r.seq, problem: 'its content does not match its hash (edited)' };
      prev = r.hash;
    }
    return undefined;
  }
}
