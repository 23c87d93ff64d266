/**
 * Just enough markdown structure for catalog entries: the frontmatter block, `## ` sections
 * and the first `# ` heading. Fenced code blocks are skipped so a `## ` inside a shell snippet
 * is not mistaken for a heading.
 */

export interface FrontmatterSplit {
  /** YAML text between the fences, or null when the file has no frontmatter. */
  yaml: string | null;
  /** 1-based file line of the first YAML line (the line after the opening `---`). */
  yamlStartLine: number;
  /** Markdown after the closing fence (the whole text when there is no frontmatter). */
  body: string;
  /** 1-based file line where `body` starts. */
  bodyStartLine: number;
  /** True when an opening `---` has no closing `---` / `...`. */
  unclosed: boolean;
}

/** Separate YAML frontmatter (`---` … `---`) from the markdown body. */
export function splitFrontmatter(text: string): FrontmatterSplit {
  const clean = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const lines = clean.split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') {
    return { yaml: null, yamlStartLine: 1, body: clean, bodyStartLine: 1, unclosed: false };
  }
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i]?.trimEnd();
    if (l === '---' || l === '...') {
      return {
        yaml: lines.slice(1, i).join('\n'),
        yamlStartLine: 2,
        body: lines.slice(i + 1).join('\n'),
        bodyStartLine: i + 2,
        unclosed: false,
      };
    }
  }
  return { yaml: null, yamlStartLine: 2, body: clean, bodyStartLine: 1, unclosed: true };
}

interface Heading {
  level: number;
  text: string;
  /** 0-based line index within the scanned text. */
  index: number;
}

function headings(body: string): { lines: string[]; found: Heading[] } {
  const lines = body.split(/\r?\n/);
  const found: Heading[] = [];
  let fence: string | null = null;
  lines.forEach((line, index) => {
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (f?.[1]) {
      const marker = f[1];
      if (fence === null) fence = marker[0] ?? null;
      else if (marker[0] === fence) fence = null;
      return;
    }
    if (fence !== null) return;
    const h = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (h?.[1] && h[2] !== undefined && h[2] !== '') found.push({ level: h[1].length, text: h[2], index });
  });
  return { lines, found };
}

/** `## Heading` → text under it (up to the next `## `), keyed by the heading lower-cased. */
export function splitSections(body: string): Record<string, string> {
  const { lines, found } = headings(body);
  const level2 = found.filter((h) => h.level === 2);
  const sections: Record<string, string> = {};
  level2.forEach((h, i) => {
    const end = level2[i + 1]?.index ?? lines.length;
    const key = h.text.toLowerCase().replace(/\s+/g, ' ').trim();
    const text = lines.slice(h.index + 1, end).join('\n').trim();
    // A repeated heading adds to the section rather than silently replacing it.
    sections[key] = sections[key] ? `${sections[key]}\n\n${text}` : text;
  });
  return sections;
}

/** The first `# ` heading's text and its 0-based line index in `body`, if any. */
export function firstHeading(body: string): { text: string; index: number } | undefined {
  const h = headings(body).found.find((x) => x.level === 1);
  return h ? { text: h.text, index: h.index } : undefined;
}
