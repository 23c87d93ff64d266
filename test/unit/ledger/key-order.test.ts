import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { noteAdded, oldestKey } from '../../../src/core/ledger/key-order.js';

/** The reference: the first key a `for…in` hands out (insertion order for string keys). */
function firstKey(dict: Record<string, unknown>): string | undefined {
  for (const k in dict) return k;
  return undefined;
}

describe('oldestKey', () => {
  it('agrees with insertion order under any mix of adds, moves to the end and deletes', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), key: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('touch' as const), key: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('evict' as const) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 40 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), fc.boolean(), (ops, warm) => {
        const dict = Object.create(null) as Record<string, number>;
        if (warm) oldestKey(dict); // the queue exists from the start, or is built mid-way
        for (const o of ops) {
          if (o.kind === 'evict') {
            const k = oldestKey(dict);
            expect(k).toBe(firstKey(dict));
            if (k !== undefined) delete dict[k];
            continue;
          }
          const key = `k${o.key}`;
          if (o.kind === 'delete') delete dict[key];
          else if (o.kind === 'add' && !(key in dict)) {
            dict[key] = 1;
            noteAdded(dict, key);
          } else if (o.kind === 'touch' && key in dict) {
            delete dict[key];
            dict[key] = 2;
            noteAdded(dict, key);
          }
          expect(oldestKey(dict)).toBe(firstKey(dict));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('finds keys added without a note (rebuilding from the dictionary)', () => {
    const dict = Object.create(null) as Record<string, number>;
    dict['a'] = 1;
    expect(oldestKey(dict)).toBe('a');
    delete dict['a'];
    dict['b'] = 1; // no note
    expect(oldestKey(dict)).toBe('b');
    delete dict['b'];
    expect(oldestKey(dict)).toBeUndefined();
  });

  it('keeps eviction order across many evictions (compaction)', () => {
    const dict = Object.create(null) as Record<string, number>;
    const evicted: string[] = [];
    for (let i = 0; i < 5000; i++) {
      dict[`t${i}`] = i;
      noteAdded(dict, `t${i}`);
      if (i >= 100) {
        const k = oldestKey(dict)!;
        evicted.push(k);
        delete dict[k];
      }
    }
    expect(evicted).toEqual(Array.from({ length: 4900 }, (_, i) => `t${i}`));
    expect(Object.keys(dict)).toHaveLength(100);
  });
});
