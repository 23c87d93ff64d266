/**
 * Filing what `reprise import pagerduty` planned (issue 31 item 3): new entries a batch per pull
 * request, each PR carrying a hidden marker per incident (a re-run finds it and files nothing
 * twice) and each entry's DupFingerprint (so the live `fixed:` path finds the draft and adds to
 * it); a trigger whose entry already exists gets its fixes through the curator's own edit of
 * that entry (core/curate/file-amend.ts), the PR open for it or a new one editing the file.
 */
import { createHash } from 'node:crypto';
import type { DraftBranchPort, ForgePort } from '../../ports/forge.js';
import { amendCatalogEntry, amendOpenPr, type AmendText } from '../curate/file-amend.js';
import type { CountingForge, FilingDeps, Outcome } from '../curate/file-item.js';
import { hasMarker, marker } from '../curate/markers.js';
import { neutraliseLine, quoteBlock } from '../curate/neutralise-markdown.js';
import { incidentMarker, type TriggerDraft } from './pagerduty-plan.js';

export type NewDraft = Extract<TriggerDraft, { kind: 'new' }>;

export interface FiledPagerDutyBatch {
  number: number;
  url: string;
  /** The incidents it carries. */
  incidents: string[];
}

/** A marker per incident the draft carries: its fixes', and the repeats counted with them (a re-run skips both). */
const markers = (d: TriggerDraft): string[] => [...d.fixes.map((f) => f.id), ...d.counted].map((id) => marker('import', incidentMarker(id)));
const who = (f: TriggerDraft['fixes'][number]): string => neutraliseLine(f.by ?? 'someone in PagerDuty', 80);
const incidentName = (f: TriggerDraft['fixes'][number]): string => neutraliseLine(f.number !== undefined ? `#${f.number} (${f.id})` : f.id, 120);

/** The PR description of one batch: its markers, then per entry the trigger and each fix with who said it. */
export function pagerDutyBatchBody(batch: readonly NewDraft[]): string {
  // A PR of one entry names its file, so a later fix for the trigger (live, or a re-run's) edits it in place; with several, which file a fix is for cannot be told from a marker.
  const only = batch.length === 1 && /^[A-Za-z0-9._/-]{1,100}$/.test(batch[0]!.entry.path) ? [marker('entry', batch[0]!.entry.path.replace(/\//g, ':'))] : [];
  const lines = [
    ...batch.flatMap((d) => [...markers(d), marker('dup', d.fingerprint)]),
    ...only,
    `Imported from ${batch.reduce((n, d) => n + d.fixes.length, 0)} resolved PagerDuty incident(s) by \`reprise import pagerduty\` — the responders' own words from their notes and resolves, no model in the loop. A human reviews and merges; the bot never sets \`last_validated\`.`,
    '',
  ];
  for (const d of batch) {
    lines.push(`- **${neutraliseLine(d.entry.path, 200)}** for trigger ${neutraliseLine(d.triggerKey, 300)}`);
    for (const f of d.fixes) lines.push(`  - ${incidentName(f)}: ${neutraliseLine(f.fix, 300)} — ${who(f)}`);
  }
  return lines.join('\n');
}

/** One branch and one PR for a batch of new entries; the branch is named by the incidents, so a retry replaces what an interrupted attempt pushed. */
export async function filePagerDutyBatch(
  forge: ForgePort,
  drafts: Pick<DraftBranchPort, 'push'>,
  batch: readonly NewDraft[],
  opts: { labels: readonly string[]; /** catalog.git.path: the catalog's folder in the repository. */ prefix?: string },
): Promise<FiledPagerDutyBatch> {
  const at = (path: string): string => (opts.prefix ? `${opts.prefix.replace(/\/+$/, '')}/${path}` : path);
  const [first, ...rest] = batch;
  if (!first) throw new Error('an empty batch files nothing');
  const ids = batch.flatMap((d) => [...d.fixes.map((f) => f.id), ...d.counted]);
  const key = createHash('sha256').update(ids.join('|')).digest('hex').slice(0, 12);
  const branch = `reprise/import/pagerduty-${key}`;
  const title = batch.length === 1 ? `KB: ${first.entry.title}` : `KB: import ${batch.length} PagerDuty fixes (${first.entry.title.slice(0, 60)}, …)`;
  await drafts.push({
    branch,
    path: at(first.entry.path),
    content: first.entry.content,
    more: rest.map((d) => ({ path: at(d.entry.path), content: d.entry.content })),
    message: title,
  });
  const pr = await forge.createPullRequest({
    title,
    body: pagerDutyBatchBody(batch),
    head: branch,
    labels: [...new Set([...opts.labels, 'pagerduty-import'])],
  });
  return { number: pr.number, url: pr.url, incidents: ids };
}

/**
 * A trigger whose entry exists: its fixes (and a cause) written into that entry — on the PR open
 * for it, else on a new PR editing the catalog's file. The PR or comment carries every
 * incident's marker. Undefined when the entry's file cannot be read to edit.
 */
export async function amendFromPagerDuty(deps: FilingDeps, forge: CountingForge, d: Exclude<TriggerDraft, { kind: 'new' }>): Promise<Outcome | undefined> {
  const [lead] = d.fixes;
  if (!lead) return undefined;
  const id = incidentMarker(lead.id);
  const change = { fixes: d.outcomes, ...(d.cause ? { cause: { text: d.cause.text, by: { name: d.cause.by, via: 'PagerDuty' }, at: d.cause.at } } : {}) };
  const text: AmendText = {
    marker: { kind: 'fix', id },
    what: d.fixes.length === 1 ? 'A fix from PagerDuty' : `${d.fixes.length} fixes from PagerDuty`,
    said: [
      ...markers(d).slice(1),
      ...d.fixes.flatMap((f) => [`From ${who(f)} on PagerDuty incident ${incidentName(f)}, ${f.at.slice(0, 10)}:`, '', quoteBlock(f.fix), '']),
    ],
  };
  if (d.kind === 'open-pr') {
    const open = (await deps.forge.listPullRequests('open')).find((p) => p.number === d.pr.number);
    if (!open) return undefined;
    const amended = await amendOpenPr(deps, forge, open, change, text);
    if (amended) return amended;
    // The PR's entry file cannot be told (a batch of several, a branch a human reworked): the fixes are said on the PR instead.
    const comments = await deps.forge.listComments(open.number);
    const existing = comments.find((c) => hasMarker(c.body, 'fix', id));
    const c =
      existing ??
      (await forge.comment(
        open.number,
        [marker('fix', id), `${text.what} for the entry of trigger ${neutraliseLine(d.triggerKey, 300)} on this PR:`, '', ...text.said].join('\n'),
      ));
    return { decision: 'pr_comment', url: c.url || open.url, number: open.number };
  }
  return amendCatalogEntry(deps, forge, { id: d.entryId, title: d.entryTitle }, d.fingerprint, change, text, [...deps.options.labels, 'pagerduty-import']);
}
