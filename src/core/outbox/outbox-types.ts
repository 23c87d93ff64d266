/**
 * What the parts of the outbox share (a leaf: the worker, its lanes, exactly-once and card
 * edits import this and not one another): the ledger view they read, their options, the item
 * they deliver and where its message shows.
 */
import type { OutboxEvent, LedgerEvent } from '../ledger-events.js';
import type { OutboxItem as OutboxRecord } from '../ledger/ledger-types.js';
import type { LedgerTx } from '../ledger/ledger-options.js';
import type { DeepReadonly, LedgerReader } from '../ledger/ledger-reader.js';

/** What the worker needs from the ledger: its reader, one event of the log by seq, and transactions. */
export interface OutboxLedger {
  /** `events` reads the shared log (what the leader recorded, when this process follows). */
  read: Pick<LedgerReader, 'pendingOutbox' | 'isOutboxPending' | 'pendingOutboxCount' | 'seq' | 'thread' | 'cardSeq' | 'events'> & {
    /** The outbox's next page: committed items recorded after `afterSeq`, oldest first, at most `limit` (a store may answer later). */
    pendingOutboxPage(afterSeq: number, limit: number): readonly OutboxItem[] | Promise<readonly OutboxItem[]>;
  };
  /** One event of the log (what an outbox item carries is read when it is sent). */
  eventAt(seq: number): Promise<LedgerEvent | undefined>;
  transaction(fn: (tx: Pick<LedgerTx, 'record'>) => Promise<void>): Promise<unknown>;
}

export type OutboxItem = DeepReadonly<OutboxRecord>;

export interface OutboxOptions {
  /** Lanes delivering at once. */
  concurrency: number;
  /** Most pending items the worker holds in memory (outbox-window.ts); the rest wait in the ledger. */
  window: number;
  /** First retry delay; doubled per attempt up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** An item still undelivered this long after it was recorded is given up (recorded). */
  maxAgeMs: number;
  /** The same for a private answer: the person who asked has moved on. */
  answerMaxAgeMs: number;
  /**
   * A post or reply answered after this process lost the lead is not recorded; the process
   * watches the ledger this long for the message the leader records, deleting its own once
   * that is another. 0: no watch (a late duplicate waits for the leader's sweep).
   */
  duplicateWatchMs: number;
  /** After recording an item that may have been sent before, look for late duplicates of it this long after (each delay once). */
  duplicateSweepMs: readonly number[];
}

export const DEFAULT_OUTBOX_OPTIONS: OutboxOptions = {
  concurrency: 8,
  window: 500,
  baseDelayMs: 1000,
  maxDelayMs: 5 * 60_000,
  maxAgeMs: 24 * 3_600_000,
  answerMaxAgeMs: 30 * 60_000,
  duplicateWatchMs: 30_000,
  duplicateSweepMs: [20_000, 120_000],
};

/** What an outbox item carries, read from the log once per send. */
export type Payload = Pick<OutboxEvent, 'view' | 'detail' | 'to'>;

/** Where a message shows: a channel, or a thread in it. */
export type Place = { channel: string; thread?: string };

/** The thread root of an incident on a surface, once delivered. */
export function rootOf(read: Pick<LedgerReader, 'thread'>, openId: string, transport: string): { channel: string; id: string } | undefined {
  return read.thread(openId)?.roots[transport];
}

/** Where an item's message shows: its channel (a post) or its thread (a reply). */
export function placeOf(read: Pick<LedgerReader, 'thread'>, item: OutboxItem): Place {
  const root = item.op === 'reply' ? rootOf(read, item.openId!, item.transport) : undefined;
  return root ? { channel: root.channel, thread: root.id } : { channel: item.channel ?? '' };
}

/** Lane of an item: one thread on one surface. */
export const laneOf = (i: OutboxItem): string => `${i.transport}|${i.openId ?? i.id}`;
