/**
 * One Incident entry per trigger identity, edited in place (issue 31 item 2, SPEC §12): a later
 * fix or a cause for a trigger whose entry exists goes into that entry — on the PR already open
 * for it (one open PR per entry: the draft that adds it, or the edit of it), else on a new PR
 * that edits the catalog's file. Idempotent through markers: the item's own PR or comment is
 * found on a retry, and the entry edit itself gives the same file when applied twice.
 */
import type { ForgePullRequest } from '../../ports/forge.js';
import { amendEntry, type EntryChange } from './amend-entry.js';
import type { CountingForge, FilingDeps, Outcome } from './file-item.js';
import { slugify } from './kb-entry.js';
import { hasMarker, marker, markerValues } from './markers.js';
import { neutraliseLine, neutraliseTitle } from './neutralise-markdown.js';

/** What is being added, for the PR and the comment: its marker, and the words a reviewer reads. */
export interface AmendText {
  /** `fix` or `note`, and the curate item's id. */
  marker: { kind: 'fix' | 'note'; id: string };
  /** "Another fix", "The cause": what the PR title says it adds. */
  what: string;
  /** The lines that say who said what (neutralised by the caller). */
  said: string[];
}

const SAFE_PATH = /^[A-Za-z0-9._/-]{1,180}\.md$/;
/** An entry path as an `entry` marker value (markers hold no `/`). */
const pathMarker = (path: string): string | undefined => (/^[A-Za-z0-9._/-]{1,100}$/.test(path) ? path.replace(/\//g, ':') : undefined);

/** The entry file an open PR proposes: its `entry` marker, else the file a `reprise/kb/<name>` draft adds. */
async function prEntry(deps: FilingDeps, pr: ForgePullRequest): Promise<{ path: string; content: string } | undefined> {
  const marked = markerValues(pr.body, 'entry').map((v) => v.replace(/:/g, '/'));
  const name = pr.head.startsWith('reprise/kb/') ? pr.head.slice('reprise/kb/'.length) : undefined;
  const candidates = [...marked, ...(name ? [`incidents/${name}.md`, `playbooks/${name}.md`] : [])].filter((p) => SAFE_PATH.test(p) && !p.includes('..'));
  for (const path of candidates) {
    const content = await deps.drafts.read(path, pr.head);
    if (content !== undefined) return { path, content };
  }
  return undefined;
}

/** The PR open for the entry of fingerprint `fp` (the draft adding it, or an edit of it), if any. */
export function openEntryPr(open: readonly ForgePullRequest[], fp: string): ForgePullRequest | undefined {
  return /^[0-9a-f]{8,64}$/.test(fp) ? open.find((p) => hasMarker(p.body, 'dup', fp)) : undefined;
}

/**
 * Applies `change` to the open PR's entry: pushes the edited file to its branch and leaves a
 * comment (with the item's marker) saying what was added. `pr_update` when it was added,
 * `duplicate_pr` when the entry already said it; undefined when the PR's file cannot be read
 * (the caller falls back to a comment).
 */
export async function amendOpenPr(
  deps: FilingDeps,
  forge: CountingForge,
  pr: ForgePullRequest,
  change: EntryChange,
  text: AmendText,
): Promise<Outcome | undefined> {
  const comments = await deps.forge.listComments(pr.number);
  const done = comments.find((c) => hasMarker(c.body, text.marker.kind, text.marker.id));
  const file = await prEntry(deps, pr);
  if (done) return { decision: 'pr_update', url: done.url || pr.url, number: pr.number, ...(file ? { detail: file.path } : {}) };
  if (!file) return undefined;
  const edited = amendEntry(file.content, change);
  if (edited === undefined) return undefined;
  if (edited === file.content) return { decision: 'duplicate_pr', url: pr.url, number: pr.number, detail: file.path };
  await deps.drafts.push({ branch: pr.head, path: file.path, content: edited, message: `KB: ${text.what} for ${file.path}` });
  const c = await forge.comment(
    pr.number,
    [marker(text.marker.kind, text.marker.id), `${text.what} added to this PR's entry (\`${file.path}\`):`, '', ...text.said].join('\n'),
  );
  return { decision: 'pr_update', url: c.url || pr.url, number: pr.number, detail: file.path };
}

/**
 * Applies `change` to the catalog's entry `entryId` on a new PR (`reprise/amend/…`) that edits the
 * file. `amend_pr` when opened, `duplicate_entry` when the entry already says it; undefined when
 * the file is not on the remote's default branch (renamed, or the catalog is not the remote's
 * root) — the caller says so.
 */
export async function amendCatalogEntry(
  deps: FilingDeps,
  forge: CountingForge,
  entry: { id: string; title: string },
  fp: string,
  change: EntryChange,
  text: AmendText,
  labels: readonly string[],
): Promise<Outcome | undefined> {
  const prefix = deps.options.catalogPath ? `${deps.options.catalogPath.replace(/^\/+|\/+$/g, '')}/` : '';
  const path = `${prefix === '/' ? '' : prefix}${entry.id}`;
  const content = await deps.drafts.read(path);
  if (content === undefined) return undefined;
  const edited = amendEntry(content, change);
  if (edited === undefined) return undefined;
  if (edited === content) return { decision: 'duplicate_entry', detail: `${entry.id} already says it` };
  const branch =
    SAFE_PATH.test(path) && !path.includes('..') ? `reprise/amend/${path.slice(0, -3)}` : `reprise/amend/${slugify(entry.title)}-${fp.slice(0, 8)}`;
  await deps.drafts.push({ branch, path, content: edited, message: `KB: ${text.what} for ${entry.id}` });
  const title = `KB: ${text.what.toLowerCase()} for ${neutraliseTitle(entry.title, 160)}`;
  const entryMarker = pathMarker(path);
  const created = await forge.createPullRequest({
    title,
    body: [
      marker('dup', fp),
      marker(text.marker.kind, text.marker.id),
      ...(entryMarker ? [marker('entry', entryMarker)] : []),
      `${text.what} for the catalog entry \`${neutraliseLine(entry.id)}\` — this PR edits that file; it adds no new entry.`,
      '',
      ...text.said,
      '',
      'The entry keeps one "What has fixed it" list for its trigger, most reliable first by the outcome ledger’s counts (worked: the alert did not come back within a day of the fix; a fix that did not hold sinks). Further fixes and causes for this entry are added to this PR while it is open. A human reviews and merges; the bot never sets `last_validated`.',
    ].join('\n'),
    head: branch,
    labels,
  });
  return { decision: 'amend_pr', url: created.url, number: created.number, detail: entry.id };
}
