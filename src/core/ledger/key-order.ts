/**
 * The oldest key of a dictionary kept in insertion order, in amortised O(1).
 *
 * The read model's bounded dictionaries (threads, fingerprints) evict their oldest key when they
 * grow past their bound. `for (const k in dict) { …; break }` looks O(1) but is not: on a
 * dictionary-mode object V8 collects every key before the first one is handed out, so each
 * eviction walked the whole registry (ms at 10k keys) and replaying a long ledger went quadratic.
 *
 * This keeps, beside each dictionary and outside the state (the snapshot's shape is unchanged),
 * a queue of its keys in insertion order, built lazily from `Object.keys` the first time it is
 * needed (after a snapshot load, once). Callers say when they add a key, or move one to the end
 * by deleting and adding it again ({@link noteAdded}); a deleted key is skipped when it reaches the
 * head. A key added without a note is still found: an exhausted queue is rebuilt from the
 * dictionary itself.
 */

interface Queue {
  keys: string[];
  head: number;
  /** Key → the index of its newest place in `keys`. */
  at: Map<string, number>;
}

const queues = new WeakMap<object, Queue>();

function build(dict: object): Queue {
  const keys = Object.keys(dict);
  const q: Queue = { keys, head: 0, at: new Map(keys.map((k, i) => [k, i])) };
  queues.set(dict, q);
  return q;
}

/** Says that `key` was just added to `dict` (or moved to its end by delete and re-add). */
export function noteAdded(dict: object, key: string): void {
  const q = queues.get(dict);
  if (q !== undefined) q.at.set(key, q.keys.push(key) - 1);
}

/** The oldest key still in `dict`, or `undefined` when it is empty. */
export function oldestKey(dict: object): string | undefined {
  let q = queues.get(dict) ?? build(dict);
  for (let rebuilt = false; ;) {
    while (q.head < q.keys.length) {
      const i = q.head;
      const key = q.keys[i]!;
      if (q.at.get(key) === i) {
        if (Object.hasOwn(dict, key)) return key;
        q.at.delete(key); // deleted from the dictionary since
      }
      q.head += 1;
      if (q.head > 1024 && q.head * 2 > q.keys.length) compact(q);
    }
    if (rebuilt) return undefined;
    q = build(dict);
    rebuilt = true;
  }
}

/** Drops the consumed head of the queue (amortised: at most once per half of it). */
function compact(q: Queue): void {
  const rest = q.keys.slice(q.head);
  const offset = q.head;
  q.keys = rest;
  q.head = 0;
  for (const [key, i] of q.at) {
    if (i < offset) q.at.delete(key);
    else q.at.set(key, i - offset);
  }
}
