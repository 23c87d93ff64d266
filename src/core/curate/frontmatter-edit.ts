/**
 * A surgical one-line edit of an entry's YAML frontmatter (retire: `status: retired`,
 * revalidate: `last_validated: YYYY-MM-DD`): the rest of the file — the human's formatting,
 * comments, key order — is kept byte for byte.
 */

/**
 * `text` with top-level `key` set to `value` in its frontmatter (replaced where it is, else
 * added last). Undefined when the file has no frontmatter block or the value is not a plain
 * scalar (nothing a sweep writes needs quoting).
 */
export function setFrontmatterKey(text: string, key: string, value: string): string | undefined {
  if (!/^[a-z_]+$/.test(key) || !/^[A-Za-z0-9._:-]+$/.test(value)) return undefined;
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/\r?\n/);
  if (lines[0]?.trim() !== '---') return undefined;
  const end = lines.findIndex((l, i) => i > 0 && (l.trim() === '---' || l.trim() === '...'));
  if (end < 0) return undefined;
  const re = new RegExp(`^${key}\\s*:`);
  const at = lines.findIndex((l, i) => i > 0 && i < end && re.test(l));
  const line = `${key}: ${value}`;
  if (at >= 0) {
    // A block value (`key:` followed by indented lines) is replaced whole.
    let stop = at + 1;
    while (stop < end && /^\s+\S|^\s*-\s/.test(lines[stop]!)) stop++;
    lines.splice(at, stop - at, line);
  } else lines.splice(end, 0, line);
  return lines.join(nl);
}
