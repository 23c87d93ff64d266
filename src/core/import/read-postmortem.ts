/**
 * One postmortem, read from the markdown shapes teams write them in (issue 31 item 3, SPEC §12
 * "Importing what a team knows"): ATX (`## Root cause`) or setext (`Root cause` over `----`)
 * headings, bold headings on a line of their own (`**Resolution**`), YAML front matter or bold
 * `**Field:** value` lines, sections in any order under their usual synonyms. What it cannot read
 * is a reason, never a half-read document. Pure: no file system, no clock.
 */
import { createHash } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { isCamelCaseAlertName } from '../catalog/alert-name.js';
import { splitFrontmatter } from '../catalog/markdown.js';
import { reduceHost, reducePodName } from '../identity.js';

export type SectionKind = 'summary' | 'impact' | 'detection' | 'trigger' | 'cause' | 'resolution' | 'actions' | 'timeline';

export interface PostmortemDoc {
  /** The file's path as given (relative to the folder imported). */
  file: string;
  title: string;
  /** `YYYY-MM-DD` when the document says when. */
  date?: string;
  sections: Partial<Record<SectionKind, string>>;
  /** Alert names it quotes (`alertname="…"`, front matter, code spans, CamelCase alert names). */
  alerts: string[];
  /** Workloads it names: `namespace/name` (pods reduced to their controller) or `host/<name>`. */
  resources: string[];
  /** sha256 of the text with line ends normalised: what makes a re-run file nothing new. */
  contentHash: string;
}

export type ReadResult = { ok: true; doc: PostmortemDoc } | { ok: false; file: string; reason: string };

/** Larger than this is not a postmortem someone wrote by hand. */
export const MAX_POSTMORTEM_BYTES = 1024 * 1024;

/**
 * Heading text → section, tested in order: the first rule that matches wins, so "Action items
 * (fixes)" is actions, not resolution, and "Trigger and root cause" is the trigger.
 */
const SECTION_RULES: ReadonlyArray<[SectionKind, RegExp]> = [
  ['actions', /\b(action items?|follow[- ]?ups?|next steps|corrective actions?|preventi(ve|on)( actions?)?|to ?dos?|remediation items?|lessons learn(ed|t))\b/],
  ['timeline', /\b(timeline|sequence of events|chronology|time ?line of events)\b/],
  ['impact', /\b(impact|blast radius|customer effect|user effect)\b/],
  ['detection', /\b(detection|detected|how (was it|we) (found|noticed|detected)|alerting)\b/],
  ['trigger', /^(the )?trigger(ing event)?s?\b|\bwhat triggered\b/],
  ['cause', /\b(root ?causes?|rca|causes?|contributing factors?|why (it|this) happened|underlying (issue|problem)|analysis)\b/],
  [
    'resolution',
    /\b(resolution|resolved|mitigations?|mitigated|remediation|fix(es|ed)?|recovery|recovered|workaround|how (it|we) (was )?(fixed|resolved)|what (fixed|resolved) it|repair)\b/,
  ],
  ['summary', /\b(summary|overview|tl;? ?dr|what happened|description|background|incident (report|overview|description))\b/],
];

/** Lower-case words of a heading: numbering, emoji, punctuation and trailing colons gone. */
function headingWords(text: string): string {
  return text
    .replace(/\*\*|__|`/g, '')
    .replace(/^\s*(\d+(\.\d+)*\.?|[ivx]+\.)\s+/i, '')
    .replace(/[^\p{L}\p{N};/&' -]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

export function sectionKind(heading: string): SectionKind | undefined {
  const w = headingWords(heading);
  if (w === '' || w.length > 80) return undefined;
  return SECTION_RULES.find(([, re]) => re.test(w))?.[0];
}

interface Heading {
  level: number;
  text: string;
  /** First line of the heading (0-based), and the first line after it. */
  line: number;
  next: number;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
/** `**Resolution**` or `**Root cause:**` alone on its line: a heading in documents exported from doc tools. */
const BOLD_HEADING = /^\s{0,3}(?:\*\*|__)([^*_]{1,80}?)(?::\s*)?(?:\*\*|__):?\s*$/;
/** `**Date:** 2024-01-02`, `**Alert**: X`, `- **Service:** checkout`, `Date: 2024-01-02` (the latter only before the first heading). */
const BOLD_FIELD = /^\s{0,3}(?:[-*+]\s+)?(?:\*\*|__)([^*_:]{1,40}?)(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:)\s*(.+)$/;
const PLAIN_FIELD = /^\s{0,3}([A-Z][A-Za-z ]{1,30}):\s+(\S.*)$/;

/** Headings outside fenced code: ATX, setext, and bold lines standing alone. */
function findHeadings(lines: readonly string[]): Heading[] {
  const out: Heading[] = [];
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const f = FENCE.exec(line);
    if (f?.[1]) {
      if (fence === null) fence = f[1][0]!;
      else if (f[1][0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const atx = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx?.[1] && atx[2]) {
      out.push({ level: atx[1].length, text: atx[2], line: i, next: i + 1 });
      continue;
    }
    const under = lines[i + 1];
    const prevBlank = i === 0 || (lines[i - 1] ?? '').trim() === '';
    if (under !== undefined && line.trim() !== '' && prevBlank && /^\s{0,3}(=+|-+)\s*$/.test(under) && !/^\s{0,3}([-*+]|\d+\.)\s/.test(line)) {
      out.push({ level: under.trim().startsWith('=') ? 1 : 2, text: line.trim(), line: i, next: i + 2 });
      i++;
      continue;
    }
    const bold = BOLD_HEADING.exec(line);
    if (bold?.[1] && sectionKind(bold[1])) out.push({ level: 3, text: bold[1], line: i, next: i + 1 });
  }
  return out;
}

const day = (v: unknown): string | undefined => {
  if (v instanceof Date && !Number.isNaN(v.getTime())) return v.toISOString().slice(0, 10);
  if (typeof v !== 'string') return undefined;
  const m = /\b(\d{4}-\d{2}-\d{2})\b/.exec(v);
  if (m?.[1]) return m[1];
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString().slice(0, 10);
};

const strings = (v: unknown): string[] =>
  (Array.isArray(v) ? v : [v]).flatMap((x) => (typeof x === 'string' ? x.split(/[,\s]+/) : typeof x === 'number' ? [String(x)] : [])).filter((s) => s !== '');

/** Alert names and workloads a text quotes: label matchers, code spans, `ns/name` in code. */
export function recognise(text: string, fields: Record<string, unknown>): { alerts: string[]; resources: string[] } {
  const alerts = new Set<string>();
  const resources = new Set<string>();
  const label = (name: string): string[] => {
    const re = new RegExp(`\\b${name}\\s*(?:=~?|:)\\s*["'\`]?([A-Za-z0-9_.:@/-]{1,200})`, 'g');
    return [...text.matchAll(re)].map((m) => m[1]!.replace(/[.,;:]+$/, ''));
  };
  for (const key of ['alert', 'alerts', 'alertname', 'alertnames', 'alert_name'])
    for (const a of strings(fields[key])) if (/^[A-Za-z_][A-Za-z0-9_:]*$/.test(a)) alerts.add(a);
  for (const a of label('alertname')) if (/^[A-Za-z_][A-Za-z0-9_:]*$/.test(a)) alerts.add(a);
  for (const m of text.matchAll(/`([^`\n]{1,200})`/g)) {
    const code = m[1]!.trim();
    if (isCamelCaseAlertName(code)) alerts.add(code);
  }
  // A CamelCase alert name written bare next to the word alert ("the KubePodCrashLooping alert fired").
  for (const m of text.matchAll(/\b([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*){2,})\b(?=\s+(?:alerts?|fired|firing|paged)\b)/g))
    if (isCamelCaseAlertName(m[1]!)) alerts.add(m[1]!);
  for (const m of text.matchAll(/\b(?:alert|alertname)\s*[:=]?\s+\**`?([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*){2,})`?/g))
    if (isCamelCaseAlertName(m[1]!)) alerts.add(m[1]!);

  const fieldNs = strings(fields['namespace'])[0];
  const namespaces = [...new Set([...(fieldNs ? [fieldNs] : []), ...label('namespace')])];
  const ns = namespaces.length === 1 ? namespaces[0] : undefined;
  const add = (namespace: string | undefined, name: string | undefined): void => {
    if (namespace && name && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(namespace) && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name))
      resources.add(`${namespace}/${name}`);
  };
  for (const r of strings(fields['resource'])) if (/^[A-Za-z0-9._:-]+\/[A-Za-z0-9._:/-]+$/.test(r)) resources.add(r);
  for (const kind of ['deployment', 'statefulset', 'daemonset', 'service', 'job_name', 'cronjob', 'container', 'app'])
    for (const n of [...strings(fields[kind]), ...label(kind)]) add(ns, n);
  for (const p of [...strings(fields['pod']), ...label('pod')]) add(ns, reducePodName(p).name);
  for (const i of [...strings(fields['host']), ...strings(fields['node']), ...label('instance'), ...label('node'), ...label('host')]) {
    const h = reduceHost(i);
    if (h && /^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(h) && !/^\d+$/.test(h)) resources.add(`host/${h}`);
  }
  for (const m of text.matchAll(/`([a-z0-9][-a-z0-9]{0,62})\/([a-z0-9][-a-z0-9.]{0,252})`/g)) add(m[1], reducePodName(m[2]!).name);
  return { alerts: [...alerts].slice(0, 10), resources: [...resources].slice(0, 5) };
}

/** Reads one postmortem. `text` is the file's content; `file` names it in the result. */
export function readPostmortem(file: string, text: string): ReadResult {
  const fail = (reason: string): ReadResult => ({ ok: false, file, reason });
  if (Buffer.byteLength(text) > MAX_POSTMORTEM_BYTES) return fail(`larger than ${MAX_POSTMORTEM_BYTES / 1024} KiB: not a hand-written postmortem`);
  if (text.includes('\u0000')) return fail('binary content (a NUL byte): not markdown');
  const normal = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const contentHash = createHash('sha256').update(normal.trim()).digest('hex');
  const split = splitFrontmatter(normal);
  if (split.unclosed) return fail('front matter opened with --- is never closed');
  let fields: Record<string, unknown> = {};
  if (split.yaml !== null && split.yaml.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = parseYaml(split.yaml, { maxAliasCount: 50, uniqueKeys: false });
    } catch (err) {
      return fail(`front matter is not valid YAML: ${((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '').replace(/:\s*$/, '')}`);
    }
    if (parsed !== null && parsed !== undefined) {
      if (typeof parsed !== 'object' || Array.isArray(parsed)) return fail('front matter is not a mapping of fields');
      fields = Object.fromEntries(Object.entries(parsed as Record<string, unknown>).map(([k, v]) => [k.toLowerCase().replace(/[\s-]+/g, '_'), v]));
    }
  }
  const lines = split.body.split('\n');
  const heads = findHeadings(lines);
  // The title: the first top-level heading that is not just a section's name ("# Incident report:
  // replica lag on orders" is a title though it says "incident"), else any heading that is no section.
  const isTitle = (h: Heading): boolean => !sectionKind(h.text) || headingWords(h.text).split(' ').length > 5;
  const top = heads.find((h) => h.level === 1 && isTitle(h)) ?? heads.find((h) => !sectionKind(h.text));
  // The preamble (plain `Date: …` lines) ends at the first section.
  const firstHead = heads.find((h) => h !== top)?.line ?? lines.length;

  // Bold `Field:` lines anywhere, plain `Field: value` lines only in the preamble.
  const sections: Partial<Record<SectionKind, string>> = {};
  lines.forEach((line, i) => {
    const m = BOLD_FIELD.exec(line) ?? (i < firstHead ? PLAIN_FIELD.exec(line) : null);
    if (!m?.[1] || !m[2]) return;
    const key = m[1]
      .trim()
      .toLowerCase()
      .replace(/[\s-]+/g, '_');
    const kind = sectionKind(m[1]);
    // `**Root cause:** …` is a section written inline; `**Incident:** INC-1` is only a field.
    const inline = kind !== undefined && (['cause', 'resolution', 'trigger', 'impact'].includes(kind) || key === 'summary');
    if (inline && m[2].trim().length > 3) sections[kind] ??= m[2].trim();
    else if (!(key in fields)) fields[key] = m[2].trim().replace(/^`|`$/g, '');
  });

  const titleField = typeof fields['title'] === 'string' ? fields['title'] : undefined;

  // Each recognised heading owns the text up to the next heading of the same or a higher level.
  heads.forEach((h, i) => {
    const kind = sectionKind(h.text);
    if (!kind || h === top) return;
    const end = heads.slice(i + 1).find((n) => n.level <= h.level || sectionKind(n.text))?.line ?? lines.length;
    const body = lines.slice(h.next, end).join('\n').trim();
    if (body === '') return;
    // A repeated section adds to the first; a bold field already read is replaced by the section.
    const prior = sections[kind];
    sections[kind] = prior && heads.some((o, j) => j < i && sectionKind(o.text) === kind) ? `${prior}\n\n${body}` : body;
  });

  const summaryLine = sections.summary?.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  const title = (
    titleField ??
    top?.text ??
    (summaryLine ? summaryLine.split(/(?<=[.!?])\s/)[0] : undefined) ??
    file.replace(/^.*\//, '').replace(/\.(md|markdown)$/i, '')
  )
    .replace(/\*\*|__|`/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  if (!sections.resolution) {
    const seen = heads.map((h) => h.text).slice(0, 8);
    return fail(`no Resolution / Mitigation section: nothing says what fixed it (${seen.length > 0 ? `headings: ${seen.join(', ')}` : 'no headings'})`);
  }
  const { alerts, resources } = recognise(normal, fields);
  const date =
    day(fields['date']) ?? day(fields['incident_date']) ?? day(fields['started']) ?? day(fields['start_time']) ?? day(/\d{4}-\d{2}-\d{2}/.exec(file)?.[0]);
  return {
    ok: true,
    doc: { file, title: title || 'Postmortem', ...(date ? { date } : {}), sections, alerts, resources, contentHash },
  };
}
