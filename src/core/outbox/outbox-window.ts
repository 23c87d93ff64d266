/**
 * The outbox window: the pending items the worker holds, at most `size` of them, read from the
 * ledger a page at a time as the ones before them go out — so draining a storm's backlog costs
 * the window, not the backlog.
 *
 * The window is always a prefix of the outbox in recorded order: every pending item up to the
 * last one read (`cursor`), nothing after it. So the head of a lane in the window is the head
 * of that lane in the ledger (order per lane holds), and an item enters it once per worker run
 * (a page starts after the cursor). It is read again when it runs low — half empty, or right
 * away when the last page found the end of the outbox (new items go out at once) — never per
 * item sent.
 */
import type { OutboxItem, OutboxLedger } from './outbox-types.js';

/** Where the window reads its pages. */
export type OutboxPages = Pick<OutboxLedger['read'], 'pendingOutboxPage' | 'isOutboxPending'>;

export class OutboxWindow {
  readonly size: number;
  readonly #read: OutboxPages;
  #items: OutboxItem[] = [];
  /** The seq of the last item read into the window. */
  #cursor = 0;
  /** The last page was full: more may wait after it. */
  #more = true;
  #reading: Promise<readonly OutboxItem[]> | undefined;

  constructor(read: OutboxPages, size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`outbox window must hold at least one item (got ${size})`);
    this.#read = read;
    this.size = size;
  }

  /** The items held, in recorded order. */
  items(): readonly OutboxItem[] {
    return this.#items;
  }

  get held(): number {
    return this.#items.length;
  }

  /** Starts over from the first pending item (a new run of the worker: the ledger may have been reloaded). */
  reset(): void {
    this.#items = [];
    this.#cursor = 0;
    this.#more = true;
  }

  /** Drops what is no longer pending (delivered or given up, by this worker or in a reloaded ledger); returns what it dropped. */
  prune(): readonly OutboxItem[] {
    const gone = this.#items.filter((i) => !this.#read.isOutboxPending(i.id));
    if (gone.length > 0) this.#items = this.#items.filter((i) => this.#read.isOutboxPending(i.id));
    return gone;
  }

  /** True when a page should be read now. */
  low(): boolean {
    const room = this.size - this.#items.length;
    return room > 0 && (!this.#more || room >= this.size / 2);
  }

  /**
   * Reads the next page into the window (up to its size) and returns the items that entered.
   * One read at a time: a second call while one runs waits for it and adds nothing.
   */
  async refill(): Promise<readonly OutboxItem[]> {
    if (this.#reading) {
      await this.#reading;
      return [];
    }
    const room = this.size - this.#items.length;
    if (room <= 0) return [];
    const reading = (async () => {
      // A macrotask: a page is read beside requests, as a store read would be.
      await new Promise<void>((resolve) => setImmediate(resolve));
      return await this.#read.pendingOutboxPage(this.#cursor, room);
    })();
    this.#reading = reading;
    try {
      const page = await reading;
      // Whatever left the outbox while the page was read is not taken in.
      const entered = page.filter((i) => this.#read.isOutboxPending(i.id));
      this.#items.push(...entered);
      const last = page.at(-1)?.seq;
      if (last !== undefined) this.#cursor = Math.max(this.#cursor, last);
      this.#more = page.length >= room;
      return entered;
    } finally {
      this.#reading = undefined;
    }
  }
}
