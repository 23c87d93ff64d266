/** Character bigrams of a lower-cased string (a set: repeats do not count twice). */
function bigrams(s: string): Set<string> {
  const t = s.toLowerCase();
  const out = new Set<string>();
  for (let i = 0; i < t.length - 1; i++) out.add(t.slice(i, i + 2));
  return out;
}

/**
 * The `n` candidates most like `input` (Dice coefficient over character bigrams, at least
 * `minSimilarity`), best first. Linear in the total length of the candidates, so a typo check
 * over every trigger key the ledger knows stays cheap.
 */
export function closeMatches(input: string, candidates: Iterable<string>, n: number, minSimilarity = 0.5): string[] {
  const a = bigrams(input.slice(0, 512));
  if (a.size === 0) return [];
  const scored: Array<{ key: string; sim: number }> = [];
  for (const key of candidates) {
    if (key.length > 4 * input.length + 16) continue;
    const b = bigrams(key);
    let shared = 0;
    for (const g of b) if (a.has(g)) shared++;
    const sim = (2 * shared) / (a.size + b.size);
    if (sim >= minSimilarity) scored.push({ key, sim });
  }
  return scored
    .sort((x, y) => y.sim - x.sim || (x.key < y.key ? -1 : 1))
    .slice(0, n)
    .map((s) => s.key);
}
