import { describe, expect, it } from 'vitest';
import type { CurationResult } from '../../../src/core/bot/curation-flow.js';
import { CurationWorker, type CurationLedger } from '../../../src/core/curate/curation-worker.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import type { CurateItem } from '../../../src/core/ledger/ledger-types.js';
import type { CatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import { ManualClock } from '../../../src/ports/clock.js';
import type { DraftBranchPort, ForgePort } from '../../../src/ports/forge.js';
import type { Logger } from '../../../src/ports/logger.js';

/** A ledger view over a list: pending items, and what transactions recorded. */
function listLedger(items: CurateItem[], opts: { throwOnce?: boolean } = {}) {
  const recorded: LedgerEvent[] = [];
  let throwNext = opts.throwOnce ?? false;
  let reads = 0;
  const ledger: CurationLedger = {
    read: {
      pendingCurate: () => {
        reads++;
        if (throwNext) {
          throwNext = false;
          throw new Error('store read failed');
        }
        return items.filter((i) => !recorded.some((e) => e.type === 'curated' && e.id === i.id));
      },
    },
  };
  /** The loop's entrance as the worker sees it: each outcome it hands back is recorded as the bot would. */
  const handle = async (i: CurationResult): Promise<void> => {
    if (i.type === 'curation_result')
      recorded.push({
        type: 'curated',
        id: i.item.id,
        subject: i.item.subject,
        openId: i.item.openId,
        triggerKey: i.item.triggerKey,
        ...i.outcome,
        at: i.item.at,
      });
  };
  return { ledger, recorded, handle, reads: () => reads };
}

const unreachable = new Proxy({}, { get: () => () => Promise.reject(new Error('the forge must not be called')) }) as ForgePort & DraftBranchPort;
const errors: unknown[] = [];
const logger: Logger = { debug() {}, info() {}, warn() {}, error: (o) => void errors.push(o), child: () => logger };

describe('CurationWorker', () => {
  it('survives a pass that throws: the error is logged and the next kick runs again', async () => {
    const l = listLedger([], { throwOnce: true });
    const w = new CurationWorker({
      ledger: l.ledger,
      handle: l.handle,
      forge: unreachable,
      drafts: unreachable,
      catalog: () => ({}) as CatalogSnapshot,
      clock: new ManualClock(),
      logger,
    });
    w.start();
    await w.idle();
    expect(errors).toContainEqual(expect.objectContaining({ err: expect.objectContaining({ message: 'store read failed' }) }));
    w.kick();
    await w.idle();
    expect(l.reads()).toBe(2);
    await w.stop();
  });

  it('gives up an item older than max_age, recorded with the reason, without calling the forge', async () => {
    const clock = new ManualClock('2026-01-10T00:00:00Z');
    const item: CurateItem = {
      id: 'c1',
      subject: 'note',
      openId: 'o1',
      triggerKey: 'a|b',
      dupFingerprint: '',
      note: { user: 'u', name: 'u', via: 'cli', text: 'x' },
      at: '2026-01-01T00:00:00Z',
    };
    const l = listLedger([item]);
    const w = new CurationWorker({
      ledger: l.ledger,
      handle: l.handle,
      forge: unreachable,
      drafts: unreachable,
      catalog: () => ({}) as CatalogSnapshot,
      clock,
      logger,
      options: { maxAgeMs: 7 * 86_400_000 },
    });
    w.start();
    await w.idle();
    expect(l.recorded).toEqual([expect.objectContaining({ type: 'curated', id: 'c1', subject: 'note', decision: 'failed', detail: 'gave up after 216 h' })]);
    await w.stop();
  });
});
