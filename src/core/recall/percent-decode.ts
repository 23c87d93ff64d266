/**
 * Lenient URL query-value decoding for untrusted alert fields. `decodeURIComponent` throws on
 * the first malformed escape (`%zz`, a lone `%`, a cut UTF-8 sequence); an alert must never
 * fail recall for that, so this decoder keeps malformed escapes as written and replaces bytes
 * that are not UTF-8 with U+FFFD. One pass over the input.
 */

const HEX: Readonly<Record<string, number>> = Object.fromEntries(
  [...'0123456789abcdef'].flatMap((c, i) => [
    [c, i],
    [c.toUpperCase(), i],
  ]),
);

const decoder = new TextDecoder('utf-8', { fatal: false });

/**
 * Decodes `%XX` escapes and, in form encoding (Go's `url.QueryEscape`, which Prometheus uses
 * for `generatorURL`), `+` as a space.
 */
export function percentDecode(s: string, plusIsSpace = true): string {
  if (!s.includes('%') && !(plusIsSpace && s.includes('+'))) return s;
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  let literalStart = 0;
  const flushLiteral = (end: number): void => {
    if (end > literalStart) for (const b of encoder.encode(s.slice(literalStart, end))) bytes.push(b);
  };
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '+' && plusIsSpace) {
      flushLiteral(i);
      bytes.push(0x20);
      literalStart = i + 1;
    } else if (c === '%') {
      const hi = HEX[s[i + 1] ?? ''];
      const lo = HEX[s[i + 2] ?? ''];
      if (hi === undefined || lo === undefined) continue;
      flushLiteral(i);
      bytes.push(hi * 16 + lo);
      i += 2;
      literalStart = i + 1;
    }
  }
  flushLiteral(s.length);
  return decoder.decode(Uint8Array.from(bytes));
}
