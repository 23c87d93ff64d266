import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../src/cli/catalog-context.js';
import { parseCases, runEval, withLeaveOneOut } from '../../src/cli/eval.js';
import { recallOptions } from '../../src/cli/recall-options.js';

/**
 * Regression guard for ranking changes (eval/README.md): a fixed, fast subset of the dev cases
 * with floors on precision and false-fire. A change that loses recall quality fails CI here;
 * the full evaluation is `reprise eval recall … --loo`.
 */
const here = dirname(fileURLToPath(import.meta.url));
const corpus = resolve(here, '../../../shared/corpus');
const hasCorpus = existsSync(resolve(corpus, 'cases-dev.jsonl'));

describe.runIf(hasCorpus)('recall quality on a dev subset (shared/corpus)', () => {
  it('keeps precision, coverage and false-fire within their floors', async () => {
    const { cases } = parseCases(readFileSync(resolve(corpus, 'cases-dev.jsonl'), 'utf8'));
    // Every positive (both variants) and every 6th negative: ~170 cases, well under a second.
    const subset = cases.filter((c, i) => !c.expect.none || i % 6 === 0);
    const { snapshot } = await loadSnapshot(resolve(corpus, 'runbooks'));
    const { metrics } = runEval(snapshot.entries, withLeaveOneOut(subset), recallOptions());
    const by = Object.fromEntries(metrics.map((m) => [m.variant, m]));
    const visible = by['name-visible']!;
    const hidden = by['name-hidden']!;
    const loo = by['leave-one-out']!;
    expect(visible.negatives).toBeGreaterThan(40);
    expect(visible.precision).toBeGreaterThanOrEqual(0.98);
    expect(visible.coverage).toBeGreaterThanOrEqual(0.95);
    expect(visible.falseFireRate).toBeLessThanOrEqual(0.01);
    expect(hidden.precision).toBeGreaterThanOrEqual(0.95);
    expect(hidden.coverage).toBeGreaterThanOrEqual(0.6);
    expect(loo.falseFireRate).toBeLessThanOrEqual(0.05);
  });
});

describe.skipIf(hasCorpus)('recall quality (corpus missing)', () => {
  it('needs ../shared/corpus beside the checkout', () => {
    expect(hasCorpus).toBe(false);
  });
});
