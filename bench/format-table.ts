/** Render rows as a Markdown table with padded columns (readable in a terminal and in docs). */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => `| ${widths.map((w, i) => (cells[i] ?? '').padEnd(w)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** "×N faster" / "×N slower" for times where `ours` and `baseline` are both ms (smaller is better). */
export function speedRatio(baseline: number | undefined, ours: number | undefined, better = 'faster', worse = 'slower'): string {
  if (baseline === undefined || ours === undefined || !(baseline > 0) || !(ours > 0)) return '–';
  const r = baseline / ours;
  return r >= 1 ? `×${fmtRatio(r)} ${better}` : `×${fmtRatio(1 / r)} ${worse}`;
}

function fmtRatio(r: number): string {
  return r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(2);
}

/** A duration or size with sensible precision. */
export function fmtNum(n: number | undefined): string {
  if (n === undefined || Number.isNaN(n)) return '–';
  if (n >= 1000) return Math.round(n).toLocaleString('en-US');
  if (n >= 100) return n.toFixed(0);
  if (n >= 10) return n.toFixed(1);
  if (n >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

/** `1000` → `1k`, `1000000` → `1M`. */
export function fmtCount(n: number): string {
  if (n >= 1_000_000 && n % 1_000_000 === 0) return `${n / 1_000_000}M`;
  if (n >= 1000 && n % 1000 === 0) return `${n / 1000}k`;
  return String(n);
}
