/**
 * A URL reduced to what identifies a document: no query, no fragment, no trailing slashes.
 * Plain index scans (no regex): `/\/+$/` and `/[?#].*$/` backtrack quadratically on a long run
 * of slashes or question marks, and `runbook_url` comes from alerts.
 */
export function urlKey(url: string): string {
  let s = url.trim();
  const q = s.indexOf('?');
  const h = s.indexOf('#');
  const cut = q < 0 ? h : h < 0 ? q : Math.min(q, h);
  if (cut >= 0) s = s.slice(0, cut);
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 0x2f /* / */) end--;
  return s.slice(0, end);
}
