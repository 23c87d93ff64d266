/**
 * `reprise demo` (issue 2): the whole loop in-process on the bundled catalog, narrated in
 * order — instant recall, the resolve, the refusal below the floor.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, runCli } from './helpers/spawn-bot.js';

afterAll(cleanup);

/** Asserts each needle occurs in `text`, each after the previous one. */
function expectInOrder(text: string, needles: string[]): void {
  let from = 0;
  for (const n of needles) {
    const at = text.indexOf(n, from);
    expect(at, `"${n}" after offset ${from}`).toBeGreaterThanOrEqual(0);
    from = at + n.length;
  }
}

describe('reprise demo', () => {
  it('exits 0 and narrates recall → resolve → refusal below the floor, in that order', async () => {
    const r = await runCli(['demo']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expectInOrder(r.stdout, ['Instant recall', '✅ resolved after', 'Recall refused', 'below floor']);
    expect(r.stdout).toMatch(/✅ resolved after \d+ min/);
    expect(r.stdout).toContain('Fall-through');
  });
});
