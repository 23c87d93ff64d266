import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { ENTRY_TYPES } from '../types.js';
import type { Entry, EntryStatus, EntryType, LintProblem } from '../types.js';
import { isAlertNameShaped, isCamelCaseAlertName } from './alert-name.js';
import { firstHeading, splitFrontmatter, splitSections } from './markdown.js';
import { FieldReader, MAX_TITLE_BYTES } from './read-fields.js';

export interface ParseResult {
  /** Absent when the entry has an error: it is skipped, never half-loaded. */
  entry?: Entry;
  problems: LintProblem[];
  /** File line of the title (frontmatter key or heading), for loader-level checks. */
  titleLine?: number;
}

/** Sections an Incident entry must have (SPEC §5). */
export const INCIDENT_SECTIONS = ['symptom', 'cause', 'resolution'] as const;
const STATUSES: readonly EntryStatus[] = ['active', 'draft', 'retired'];

interface Frontmatter {
  data: Record<string, unknown>;
  keyLines: Map<string, number>;
}

/** Parse the YAML block; problems carry FILE line numbers (offset past the `---` line). */
function readFrontmatter(file: string, yaml: string, startLine: number, problems: LintProblem[]): Frontmatter | null {
  const lineCounter = new LineCounter();
  const doc = parseDocument(yaml, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const toFileLine = (offset: number): number => startLine - 1 + lineCounter.linePos(offset).line;
  if (doc.errors.length > 0) {
    for (const e of doc.errors) {
      const pos = e.linePos?.[0] ?? lineCounter.linePos(e.pos[0]);
      // yaml's message names a line inside the frontmatter; ours names the file line instead.
      const first = (e.message.split('\n')[0] ?? e.message).slice(0, 500);
      // Drop the parser's own " at line L, column C:" tail (the problem carries the line).
      const at = first.lastIndexOf(' at line ');
      const what = at >= 0 && /^ at line \d+, column \d+:?\s*$/.test(first.slice(at)) ? first.slice(0, at).trimEnd() : first;
      problems.push({
        file, line: startLine - 1 + pos.line, rule: 'frontmatter-yaml', severity: 'error',
        message: `frontmatter is not valid YAML at column ${pos.col}: ${what}; fix the YAML between the --- lines (quote values containing ": " or "#")`,
      });
    }
    return null;
  }
  if (doc.contents === null) return { data: {}, keyLines: new Map() };
  if (!isMap(doc.contents)) {
    problems.push({
      file, line: startLine, rule: 'frontmatter-not-mapping', severity: 'error',
      message: 'frontmatter must be a YAML mapping of `key: value` lines (type, title, …)',
    });
    return null;
  }
  const keyLines = new Map<string, number>();
  for (const pair of doc.contents.items) {
    if (isScalar(pair.key) && pair.key.range) keyLines.set(String(pair.key.value), toFileLine(pair.key.range[0]));
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 50 });
  } catch (err) {
    problems.push({
      file, line: startLine, rule: 'frontmatter-yaml', severity: 'error',
      message: `frontmatter could not be read (${(err as Error).message}); remove YAML aliases/anchors`,
    });
    return null;
  }
  return { data: (data ?? {}) as Record<string, unknown>, keyLines };
}

function baseName(relPath: string): string {
  const last = relPath.split('/').pop() ?? relPath;
  return last.replace(/\.md$/i, '');
}

function status(r: FieldReader): EntryStatus {
  const v = r.data['status'];
  if (v === undefined || v === null) return 'active';
  const s = typeof v === 'string' ? v.trim().toLowerCase() : '';
  if ((STATUSES as readonly string[]).includes(s)) return s as EntryStatus;
  r.report('warning', 'status-unknown', 'status',
    `status ${JSON.stringify(v)} is not active, draft or retired; it is treated as active`);
  return 'active';
}

function source(r: FieldReader): string | undefined {
  const s = r.string('source', 'warning');
  if (s !== undefined && !URL.canParse(s)) {
    r.report('warning', 'source-not-url', 'source', `\`source\` should be the URL of the original document, got "${s}"`);
  }
  return s;
}

/** A file without `type`: an existing runbook read as a Playbook (SPEC §5 foreign runbooks). */
function foreignEntry(relPath: string, r: FieldReader, body: string, bodyStartLine: number): ParseResult {
  const heading = firstHeading(body);
  const fmTitle = typeof r.data['title'] === 'string' ? r.data['title'].trim().split(/\r?\n/)[0] ?? '' : '';
  const title = fmTitle || heading?.text || baseName(relPath);
  const titleLine = fmTitle ? r.line('title') : heading ? bodyStartLine + heading.index : 1;
  // The file name is the stronger signal: repositories name one file per alert, and a
  // copy-pasted heading (an upstream runbook carries another alert's name) must not win.
  // Erring towards an alert is the safe side: a runbook naming no alert is offered for any.
  const base = baseName(relPath);
  const named = isAlertNameShaped(base) ? base : heading && isCamelCaseAlertName(heading.text) ? heading.text : undefined;
  const listed = stringList(r.data['alerts']);
  // Hugo's own `aliases` are old URL paths (`/kubememovercommit/`); only alert-shaped ones are names.
  const aliases = stringList(r.data['aliases']).filter(isAlertNameShaped);
  const alertNames = dedupeNames([...listed, ...(named ? [named] : []), ...aliases]);
  const alerts = [...new Set(alertNames.map((a) => a.toLowerCase()))];
  const pointsTo = pointerTarget(relPath, body, named);
  r.report('warning', 'foreign-runbook', 1,
    `no \`type\` in frontmatter: read as a Playbook titled "${title}"${named ? ` covering alert ${named}` : ''}` +
      `${pointsTo ? ` that points to ${pointsTo}` : ''}; add \`type: Playbook\` and \`title:\` to make it a catalog entry`);
  const entry: Entry = {
    id: relPath,
    type: 'Playbook',
    title: truncateBytes(title, MAX_TITLE_BYTES),
    description: typeof r.data['description'] === 'string' ? r.data['description'].trim() : '',
    tags: stringList(r.data['tags']),
    // Hugo's `draft: true` means "not published"; honour it like our own draft status.
    status: r.data['draft'] === true ? 'draft' : 'active',
    alerts,
    alertNames,
    sections: splitSections(body),
    body,
    foreign: true,
  };
  if (pointsTo) entry.pointsTo = pointsTo;
  return { entry, problems: r.problems, titleLine };
}

/** A foreign file's own fields are used when they fit, and silently ignored otherwise. */
function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').map((x) => x.trim()).filter(Boolean) : [];
}

function truncateBytes(s: string, max: number): string {
  if (Buffer.byteLength(s) <= max) return s;
  let out = s;
  while (Buffer.byteLength(`${out}…`) > max) out = out.slice(0, -1);
  return `${out}…`;
}

function entryType(r: FieldReader): EntryType | undefined {
  const v = r.data['type'];
  const match = typeof v === 'string' ? ENTRY_TYPES.find((t) => t.toLowerCase() === v.trim().toLowerCase()) : undefined;
  if (match === undefined) {
    r.report('error', 'type-invalid', 'type', `type ${JSON.stringify(v)} is not one of ${ENTRY_TYPES.join(', ')}`);
  } else if (match !== v) {
    r.report('warning', 'type-case', 'type', `write \`type: ${match}\` (types are capitalised)`);
  }
  return match;
}

function title(r: FieldReader): string | undefined {
  const t = r.string('title');
  if (t === undefined || t === '') {
    if (!r.has('title')) r.report('error', 'title-missing', 1, 'entry has no `title`; add `title: <one line>` to the frontmatter');
    else if (t === '') r.report('error', 'title-missing', 'title', '`title` is empty; write one line saying what the entry is about');
    return undefined;
  }
  if (/[\r\n]/.test(t)) {
    r.report('error', 'title-multiline', 'title', '`title` must be a single line; move the rest into `description`');
    return undefined;
  }
  const bytes = Buffer.byteLength(t);
  if (bytes > MAX_TITLE_BYTES) {
    r.report('error', 'title-too-long', 'title',
      `\`title\` is ${bytes} bytes; shorten it to at most ${MAX_TITLE_BYTES} and move detail into \`description\``);
    return undefined;
  }
  return t;
}

/**
 * Parse one catalog file. Never throws: a broken entry comes back without `entry` and with
 * at least one error; warnings leave the entry usable. `relPath` (with `/` separators) is the
 * entry id and the `file` of every problem.
 */
export function parseEntry(relPath: string, text: string): ParseResult {
  const problems: LintProblem[] = [];
  const split = splitFrontmatter(text);
  if (split.unclosed) {
    problems.push({
      file: relPath, line: 1, rule: 'frontmatter-unclosed', severity: 'error',
      message: 'frontmatter opened with --- is never closed; add a --- line after the last key',
    });
    return { problems };
  }
  const fm = split.yaml === null ? { data: {}, keyLines: new Map<string, number>() }
    : readFrontmatter(relPath, split.yaml, split.yamlStartLine, problems);
  if (fm === null) return { problems };

  const r = new FieldReader(relPath, fm.data, fm.keyLines, split.yaml === null ? 1 : split.yamlStartLine);
  if (!r.has('type')) return foreignEntry(relPath, r, split.body, split.bodyStartLine);

  const type = entryType(r);
  const entryTitle = title(r);
  const resource = r.resource('resource');
  const alertResource = r.resource('alert_resource');
  const sections = splitSections(split.body);
  // `aliases`: other names of the alerts this entry covers (an alert renamed upstream).
  const covered = [...r.list('alerts'), ...r.list('aliases')];
  if (type === 'Incident') {
    if (!r.has('resource')) {
      r.report('error', 'resource-missing', 'type',
        'an Incident entry needs `resource` (namespace/name, a namespace, or an ARN); use type Playbook for a resource-less guide');
    }
    const missing = INCIDENT_SECTIONS.filter((s) => sections[s] === undefined);
    if (missing.length > 0) {
      const names = missing.map((s) => `## ${s[0]?.toUpperCase()}${s.slice(1)}`).join(', ');
      r.report('error', 'section-missing', 'type', `an Incident entry needs the section(s) ${names}; add them to the body`);
    }
  }
  const entry: Entry = {
    id: relPath,
    type: type ?? 'Playbook',
    title: entryTitle ?? '',
    description: r.string('description') ?? '',
    tags: r.list('tags'),
    status: status(r),
    alerts: [...new Set(covered.map((a) => a.toLowerCase()))],
    alertNames: dedupeNames(covered),
    sections,
    body: split.body,
    foreign: false,
  };
  // Optional fields are set only when present, so an entry never carries `key: undefined`.
  if (resource) entry.resource = resource;
  if (alertResource) entry.alertResource = alertResource;
  const timestamp = r.date('timestamp');
  if (timestamp !== undefined) entry.timestamp = timestamp;
  const lastValidated = r.date('last_validated');
  if (lastValidated !== undefined) entry.lastValidated = lastValidated;
  const fingerprint = r.string('fingerprint');
  if (fingerprint) entry.fingerprint = fingerprint;
  const src = source(r);
  if (src) entry.source = src;

  const titleLine = r.line('title');
  if (r.problems.some((p) => p.severity === 'error')) return { problems: r.problems, titleLine };
  return { entry, problems: r.problems, titleLine };
}

/** Alert names as written, each once whatever its case. */
function dedupeNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  return names.filter((n) => {
    const k = n.toLowerCase();
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** A pointer page says one sentence besides its link; a runbook says more. */
const POINTER_MAX_WORDS = 30;
/** Only bodies this short are examined as pointer pages. */
const POINTER_MAX_CHARS = 2000;
/** `[text](target)` or Hugo's `{{< ref "target" >}}` / `{{< relref "target" >}}`. */
const LINK = /\{\{<\s*(?:rel)?ref\s+"([^"\n]+)"\s*>\}\}|\]\(([^()\s]+)\)/g;
/** "renamed to KubeFoo", "see KubeFoo", "replaced by KubeFoo", "moved to KubeFoo". */
const NAMED_POINTER = /\b(?:see|renamed(?: to)?|moved to|replaced by|superseded by)\s+[`*_]*([A-Za-z][A-Za-z0-9]{2,100})/i;

/**
 * Upstream runbook repositories keep a page for a renamed or merged alert that only says
 * "see X" (`NodeRAIDDiskFailure.md`: "See [Node RAID Degraded](./NodeRAIDDegraded.md)").
 * Such a page points to X: a path relative to the catalog root for a link, or the alert name
 * itself for a bare "renamed to X". Undefined for a page with content of its own.
 */
export function pointerTarget(relPath: string, body: string, ownAlert?: string): string | undefined {
  if (body.length > POINTER_MAX_CHARS) return undefined;
  const prose = body.split(/\r?\n/).filter((l) => !/^\s*#/.test(l)).join('\n');
  const targets = [...prose.matchAll(LINK)].map((m) => m[1] ?? m[2] ?? '').filter((t) => t !== '');
  const words = prose.replace(LINK, ' ').match(/[A-Za-z]+/g) ?? [];
  if (words.length === 0 || words.length > POINTER_MAX_WORDS) return undefined;
  const local = [...new Set(targets.map((t) => resolveLink(relPath, t)).filter((t): t is string => t !== undefined && t !== relPath))];
  if (local.length === 1) return local[0];
  if (targets.length > 0) return undefined;
  const named = NAMED_POINTER.exec(prose)?.[1];
  return named && isAlertNameShaped(named) && named.toLowerCase() !== ownAlert?.toLowerCase() ? named : undefined;
}

/** A link target as a catalog path (`./X.md` beside `node/Y.md` → `node/X.md`); undefined for other sites. */
function resolveLink(relPath: string, target: string): string | undefined {
  const bare = target.replace(/[?#].*$/, '');
  if (bare === '' || /^[a-z][a-z0-9+.-]*:/i.test(bare)) return undefined;
  const parts = bare.startsWith('/') ? [] : relPath.split('/').slice(0, -1);
  for (const seg of bare.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  return parts.length > 0 ? parts.join('/') : undefined;
}
