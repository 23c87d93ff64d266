/**
 * What an import files (issue 31 item 3): every postmortem read, through the curator's dedup gate
 * — a PR that already carries its content (open, merged or closed by a human: a "no" is never
 * re-asked), the same DupFingerprint in the catalog or an open draft, a catalog entry about the
 * same subject scoring at least `dup_score`, or an earlier postmortem of the same run — and the
 * rest in batches of at most N entries, one pull request each. Idempotent through hidden markers:
 * a re-run, or a run after a crash half-way, finds what it filed and files nothing twice.
 */
import { createHash } from 'node:crypto';
import type { DraftBranchPort, ForgePort, ForgePullRequest } from '../../ports/forge.js';
import { hasMarker, marker } from '../curate/markers.js';
import { neutraliseLine } from '../curate/neutralise-markdown.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import { tokenize } from '../tokenize.js';
import { firstLine, renderPostmortemEntry, type PostmortemDraft } from './postmortem-entry.js';
import type { ReadResult } from './read-postmortem.js';

export interface Skipped {
  file: string;
  reason: string;
  url?: string;
}

export interface ImportPlan {
  drafts: PostmortemDraft[];
  /** Read, but already known: filed before, in the catalog, or a duplicate within this run. */
  skipped: Skipped[];
  /** Could not be read: the reason, and nothing of it was imported. */
  unreadable: Skipped[];
}

export interface PlanDeps {
  catalog: CatalogSnapshot;
  /** Every pull request on the forge (open and closed); empty without a forge. */
  pullRequests: readonly ForgePullRequest[];
  dupScore: number;
  /** A URL for the file (`source:` of the entry), when the postmortems came from a repository. */
  sourceUrl?: (file: string) => string | undefined;
}

const prWord = (p: ForgePullRequest): string => (p.merged ? 'merged' : p.state === 'open' ? 'open' : 'closed unmerged');

export function planImport(read: readonly ReadResult[], deps: PlanDeps): ImportPlan {
  const plan: ImportPlan = { drafts: [], skipped: [], unreadable: [] };
  const seen = new Map<string, string>();
  for (const r of read) {
    if (!r.ok) {
      plan.unreadable.push({ file: r.file, reason: r.reason });
      continue;
    }
    const source = deps.sourceUrl?.(r.doc.file);
    const draft = renderPostmortemEntry(r.doc, source ? { sourceUrl: source } : {});
    const skip = (reason: string, url?: string): void => void plan.skipped.push({ file: r.doc.file, reason, ...(url ? { url } : {}) });
    const filed = deps.pullRequests.find((p) => hasMarker(p.body, 'import', r.doc.contentHash));
    if (filed) {
      skip(`already imported in PR #${filed.number} (${prWord(filed)})`, filed.url);
      continue;
    }
    const drafted = deps.pullRequests.find((p) => p.state === 'open' && hasMarker(p.body, 'dup', draft.fingerprint));
    if (drafted) {
      skip(`the same knowledge is drafted in open PR #${drafted.number}`, drafted.url);
      continue;
    }
    const dup = catalogDuplicate(draft, deps);
    if (dup) {
      skip(`the catalog already has it: ${dup}`);
      continue;
    }
    const earlier = seen.get(draft.fingerprint) ?? seen.get(r.doc.contentHash);
    if (earlier) {
      skip(`the same incident as ${earlier}, imported once`);
      continue;
    }
    seen.set(draft.fingerprint, r.doc.file);
    seen.set(r.doc.contentHash, r.doc.file);
    plan.drafts.push(draft);
  }
  return plan;
}

/**
 * The catalog's entry for the same knowledge: one imported from the same text, its fingerprint, or
 * — the curator's score gate — one about the same subject scoring at least dup_score whose cause
 * also says the same (most of the smaller side's words shared): one workload has many
 * postmortems with different causes, and a long postmortem scores high against any of them.
 */
function catalogDuplicate(d: PostmortemDraft, deps: PlanDeps): string | undefined {
  const entries = deps.catalog.entries.filter((e) => e.status !== 'retired');
  const stamp = `sha256 ${d.doc.contentHash.slice(0, 12)}`;
  const imported = entries.find((e) => e.body.includes(stamp));
  if (imported) return `${imported.id} (imported from the same text)`;
  const same = entries.find((e) => e.fingerprint === d.fingerprint);
  if (same) return `${same.id} (same fingerprint)`;
  const s = d.doc.sections;
  const taught = s.cause ?? s.trigger ?? s.resolution ?? '';
  const tokens = tokenize(taught);
  if (tokens.length === 0) return undefined;
  const alerts = new Set(d.alerts.map((a) => a.toLowerCase()));
  const mine = new Set(tokens);
  for (const h of deps.catalog.index.search(tokens, 10)) {
    const e = h.entry;
    const sameSubject = d.resource ? e.resource?.raw === d.resource || e.alertResource?.raw === d.resource : !e.resource && e.alerts.some((a) => alerts.has(a));
    if (e.status === 'retired' || !sameSubject || h.score < deps.dupScore) continue;
    const theirs = new Set(tokenize(s.cause || s.trigger ? (e.sections['cause'] ?? '') : (e.sections['resolution'] ?? '')));
    const shared = [...mine].filter((t) => theirs.has(t)).length;
    const smaller = Math.min(mine.size, theirs.size);
    if (smaller >= 3 && shared / smaller >= 0.5) return `${e.id} (score ${h.score.toFixed(1)} ≥ ${deps.dupScore}, ${shared} of ${smaller} cause words shared)`;
  }
  return undefined;
}

/** Drafts cut into batches of at most `size`, in the order they were read. */
export function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export interface FiledBatch {
  number: number;
  url: string;
  files: string[];
}

/** The PR description of one batch: a marker per postmortem (its content and its fingerprint), what each entry says fixed it. */
export function batchPrBody(batch: readonly PostmortemDraft[]): string {
  const lines = [
    ...batch.flatMap((d) => [marker('import', d.doc.contentHash), marker('dup', d.fingerprint)]),
    `Imported from ${batch.length === 1 ? 'a postmortem' : `${batch.length} postmortems`} by \`reprise import postmortems\` — no model in the loop. A human reviews and merges; the bot never sets \`last_validated\`.`,
    '',
  ];
  for (const d of batch) {
    const fix = firstLine(d.doc.sections.resolution ?? '');
    lines.push(
      `- **${neutraliseLine(d.entry.path, 200)}** from ${neutraliseLine(d.doc.file, 200)}${d.resource ? ` (${neutraliseLine(d.resource, 200)})` : ''}${d.alerts.length > 0 ? `, alerts ${neutraliseLine(d.alerts.join(', '), 200)}` : ''}`,
      `  - Resolution: ${neutraliseLine(fix, 300)}`,
    );
  }
  return lines.join('\n');
}

/** One branch and one PR for a batch. The branch is named by the batch's content, so a retry replaces what an interrupted attempt pushed. */
export async function fileBatch(
  forge: ForgePort,
  drafts: Pick<DraftBranchPort, 'push'>,
  batch: readonly PostmortemDraft[],
  opts: { labels: readonly string[]; /** catalog.git.path: the catalog's folder in the repository. */ prefix?: string },
): Promise<FiledBatch> {
  const at = (path: string): string => (opts.prefix ? `${opts.prefix.replace(/\/+$/, '')}/${path}` : path);
  const key = createHash('sha256')
    .update(batch.map((d) => d.doc.contentHash).join('|'))
    .digest('hex')
    .slice(0, 12);
  const [first, ...rest] = batch;
  if (!first) throw new Error('an empty batch files nothing');
  const branch = `reprise/import/postmortems-${key}`;
  const title = batch.length === 1 ? `KB: ${first.entry.title}` : `KB: import ${batch.length} postmortems (${first.entry.title.slice(0, 60)}, …)`;
  await drafts.push({
    branch,
    path: at(first.entry.path),
    content: first.entry.content,
    more: rest.map((d) => ({ path: at(d.entry.path), content: d.entry.content })),
    message: title,
  });
  const pr = await forge.createPullRequest({ title, body: batchPrBody(batch), head: branch, labels: [...new Set([...opts.labels, 'postmortem-import'])] });
  return { number: pr.number, url: pr.url, files: batch.map((d) => d.doc.file) };
}
