/**
 * The ledger's append listener (what `reprise_ledger_appended_total` counts): told each durable
 * append once, never an append that failed or an idempotent replay that wrote nothing, and a
 * listener that throws cannot fail a transaction whose events are already durable.
 */
import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { silentLogger, type Logger } from '../../../src/ports/logger.js';
import { TK, open, resolve, vote } from './ledger-events-fixture.js';

describe('ledger append listener', () => {
  it('is told each durable append, in order, and not the replay of an id already written', async () => {
    const told: string[][] = [];
    const ledger = await Ledger.open(createStore('memory://', ''), { onAppend: (events) => void told.push(events.map((e) => e.type)) });
    await ledger.transaction(
      async (tx) => {
        tx.record(open('f', 0));
        tx.record(vote(TK, 'ann', 'down', 1));
      },
      { id: 'webhook-1' },
    );
    await ledger.append(resolve('f', 2));
    await ledger.transaction(
      async (tx) => {
        tx.record(open('f', 3));
      },
      { id: 'webhook-1' },
    );
    expect(ledger.seq).toBe(3);
    expect(told).toEqual([['open', 'feedback'], ['resolve']]);
  });

  it('is not told a write that failed', async () => {
    const store = createStore('memory://', '');
    const told: LedgerEvent[] = [];
    const ledger = await Ledger.open(store, { onAppend: (events) => void told.push(...events) });
    store.appendLog = async () => {
      throw new Error('disk full');
    };
    await expect(ledger.append(open('f', 0))).rejects.toThrow('disk full');
    expect(told).toEqual([]);
  });

  it('cannot fail a transaction by throwing: the events are durable, the failure is logged', async () => {
    const warnings: unknown[] = [];
    const logger: Logger = { ...silentLogger, warn: (o) => void warnings.push(o), child: () => logger };
    const ledger = await Ledger.open(createStore('memory://', ''), {
      logger,
      onAppend: () => {
        throw new Error('listener bug');
      },
    });
    await expect(ledger.append(open('f', 0))).resolves.toBe(1);
    expect(ledger.seq).toBe(1);
    expect(warnings).toHaveLength(1);
  });
});
