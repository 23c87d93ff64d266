/**
 * "Seen before" (issue 31 item 1, SPEC §12): the history a new card carries, without a model and
 * without being asked — the last episodes of its trigger, or of the same alert on a sibling
 * workload or host (`web-01` / `web-02`, `worker-1` / `worker-3`): when each started, how long it
 * lasted, who acknowledged it, what fixed it in the person's own words (from the ledger, merged
 * into the catalog or not) and whether that held (no recurrence within a day).
 *
 * History, never an answer: it is read after the gates decided and changes nothing they decide.
 * Every string is text; renderers escape it (a fix that says `<!channel>` stays inert). People are
 * person runs, named the way the rest of the card names them (a Slack mention, a Matrix pill).
 * Reads the ledger's read model only (episodes, threads, fixes of a trigger): no event scan.
 */
import { shortDuration } from '../duration.js';
import { cleanName, personFromKey, type PersonRun } from '../people.js';
import type { RichText, SeenBeforeView } from './thread-view.js';
import { spanEnd, spanStart } from './incident-span.js';

/** Episodes shown, one line each; the rest is "N more". */
export const SEEN_BEFORE_LINES = 3;
/** A fix "held" when the alert did not come back within this long of its end. */
export const HELD_WINDOW_MS = 24 * 3_600_000;
/** Longest fix text on a line (the thread and `/ui` keep it whole). */
const FIX_CHARS = 160;

/** One past episode as the ledger keeps it (an `Episode`, or an open still firing). */
export interface PastEpisode {
  openId?: string | undefined;
  triggerKey: string;
  openedAt: string;
  startsAt?: string | undefined;
  resolvedAt?: string | undefined;
  endsAt?: string | undefined;
}

/** What seen-before reads of the ledger: a narrow view of its reader. */
export interface SeenBeforeReads {
  recentEpisodes(triggerKey: string): ReadonlyArray<PastEpisode>;
  occurrences(triggerKey: string): { count: number; newestOpen?: { id?: string | undefined; at: string; startsAt?: string | undefined } | undefined };
  /** The thread of an open (a storm member's: the thread it joined). */
  thread(
    openId: string,
  ): { openId: string; acks?: ReadonlyArray<{ user: string; name?: string | undefined; via?: string | undefined }> | undefined } | undefined;
  humanFixes(triggerKey: string): ReadonlyArray<{ user: string; via?: string | undefined; text: string; at: string; openId?: string | undefined }>;
  /** Trigger keys of the same alert on sibling workloads or hosts (not `triggerKey` itself). */
  siblingTriggers(triggerKey: string): string[];
}

/**
 * The family of a workload or host name: its first DNS label without a trailing instance number,
 * with the rest of the name kept (`web-01.prod.example.com` → `web#.prod.example.com`). Undefined
 * for a name that carries no instance number, or nothing else (an IP address, `01`): those have
 * no siblings, so an unrelated thing is never "the same alert elsewhere".
 */
export function nameFamily(name: string): string | undefined {
  const n = name.trim().toLowerCase();
  if (/^[\d.:]+$/.test(n)) return undefined;
  const dot = n.indexOf('.');
  const first = dot < 0 ? n : n.slice(0, dot);
  const rest = dot < 0 ? '' : n.slice(dot);
  if (!/\d$/.test(first)) return undefined;
  const stem = first.replace(/\d+$/, '').replace(/[-_]+$/, '');
  if (stem.length < 2 || !/[a-z]/.test(stem)) return undefined;
  return `${stem}#${rest}`;
}

/**
 * The key of a trigger's sibling family: the trigger key with its name part reduced to its family
 * (every other part — alert, namespace, kind, cluster, account, qualifiers — kept as is). Undefined
 * when the name has no family (see {@link nameFamily}).
 */
export function siblingFamilyKey(triggerKey: string): string | undefined {
  const parts = triggerKey.split('|');
  if (parts.length < 4) return undefined;
  const family = nameFamily(parts[3] ?? '');
  if (family === undefined) return undefined;
  parts[3] = family;
  return parts.join('|');
}

/** The name part of a trigger key (`web-02`), unescaped. */
function keyName(triggerKey: string): string {
  return (triggerKey.split('|')[3] ?? '').replaceAll('%7c', '|').replaceAll('%25', '%');
}

/** The person a ledger user (`slack:U0ANN`, `matrix:@ann:hs`, a CLI name) is, with the name the event carried. */
function who(user: string, via?: string, name?: string): PersonRun {
  const p = personFromKey(user, via);
  const shown = cleanName(name);
  return { person: { ...p, ...(shown && shown !== p.id ? { name: shown } : {}) } };
}

/** Adjacent text runs as one. */
function joinText(runs: RichText): RichText {
  const out: RichText = [];
  for (const r of runs) {
    const last = out.at(-1);
    if (typeof r === 'string' && typeof last === 'string') out[out.length - 1] = last + r;
    else out.push(r);
  }
  return out;
}

function oneLine(text: string, limit: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > limit ? `${t.slice(0, limit - 1).trimEnd()}…` : t;
}

/** "2026-12-01 14:05 UTC". */
function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso.slice(0, 16) : `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)} UTC`;
}

interface Candidate extends PastEpisode {
  start: string;
  end?: string | undefined;
  /** Opens folded into it (the alerts of one storm thread are one episode). */
  opens: string[];
}

/** Alerts coalesced into one thread are one episode: from the earliest start to the latest end (none while one still fires). */
function byThread(read: SeenBeforeReads, list: Candidate[]): Candidate[] {
  const out = new Map<string, Candidate>();
  let anon = 0;
  for (const c of list) {
    const id = c.openId === undefined ? `#${anon++}` : (read.thread(c.openId)?.openId ?? c.openId);
    const had = out.get(id);
    if (!had) {
      out.set(id, { ...c, openId: c.openId === undefined ? undefined : id });
      continue;
    }
    if (Date.parse(c.start) < Date.parse(had.start)) had.start = c.start;
    had.end = had.end === undefined || c.end === undefined ? undefined : Date.parse(c.end) > Date.parse(had.end) ? c.end : had.end;
    had.opens.push(...c.opens);
  }
  return [...out.values()];
}

/**
 * The card's "Seen before" block for an alert about to open: undefined when neither its trigger nor
 * a sibling fired before. `now` is the new firing's time: the newest episode's fix "did not hold"
 * when this very firing came within a day of its end.
 */
export function seenBefore(read: SeenBeforeReads, triggerKey: string, firedAt: Date, moreUrl?: string): SeenBeforeView | undefined {
  const keys = [triggerKey, ...read.siblingTriggers(triggerKey).filter((k) => k !== triggerKey)];
  const found: Candidate[] = [];
  let total = 0;
  for (const key of keys) {
    const occ = read.occurrences(key);
    total += occ.count;
    const seen = new Set<string>();
    for (const e of read.recentEpisodes(key)) {
      const start = spanStart({ startsAt: e.startsAt, openedAt: e.openedAt });
      if (start === undefined) continue;
      if (e.openId !== undefined) seen.add(e.openId);
      found.push({ ...e, start, end: spanEnd({ endsAt: e.endsAt, resolvedAt: e.resolvedAt }), opens: e.openId === undefined ? [] : [e.openId] });
    }
    // An occurrence still firing (a sibling host, a pod of the trigger) is history too.
    const open = occ.newestOpen;
    if (open && (open.id === undefined || !seen.has(open.id))) {
      const start = spanStart({ startsAt: open.startsAt, openedAt: open.at });
      if (start !== undefined)
        found.push({ openId: open.id, triggerKey: key, openedAt: open.at, startsAt: open.startsAt, start, opens: open.id === undefined ? [] : [open.id] });
    }
  }
  if (found.length === 0) return undefined;
  const all = byThread(read, found);
  all.sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
  const fixes = new Map<string, Array<{ user: string; via?: string | undefined; text: string; at: string }>>();
  for (const key of keys)
    for (const f of read.humanFixes(key)) if (f.openId !== undefined) (fixes.get(f.openId) ?? fixes.set(f.openId, []).get(f.openId)!).push(f);

  const lines = all
    .slice(-SEEN_BEFORE_LINES)
    .reverse()
    .map((e) => {
      // Whether it held: the next start after its end (this very firing, when nothing came between).
      const endMs = e.end === undefined ? undefined : Date.parse(e.end);
      const next = all.find((o) => endMs !== undefined && Date.parse(o.start) >= endMs)?.start ?? firedAt.toISOString();
      const parts: RichText[] = [[when(e.start)]];
      if (e.triggerKey !== triggerKey) parts.push([`on ${oneLine(keyName(e.triggerKey), 80)}`]);
      parts.push([e.end !== undefined ? `lasted ${shortDuration(Date.parse(e.end) - Date.parse(e.start))}` : 'still firing']);
      const acks = (e.openId === undefined ? undefined : read.thread(e.openId)?.acks) ?? [];
      if (acks.length > 0) {
        const named: RichText = acks.slice(0, 2).flatMap((a, i) => [...(i > 0 ? [', '] : []), who(a.user, a.via, a.name)]);
        parts.push(['acked by ', ...named, ...(acks.length > 2 ? [` +${acks.length - 2}`] : [])]);
      }
      const fix = e.opens
        .flatMap((id) => fixes.get(id) ?? [])
        .sort((a, b) => (a.at < b.at ? -1 : 1))
        .at(-1);
      if (fix) parts.push(['fixed by ', who(fix.user, fix.via), `: “${oneLine(fix.text, FIX_CHARS)}”`]);
      else if (e.end !== undefined) parts.push(['no fix recorded']);
      if (endMs !== undefined) {
        const gap = Math.max(0, Date.parse(next) - endMs);
        if (gap < HELD_WINDOW_MS) parts.push([`came back ${shortDuration(gap)} later`]);
        else parts.push(['held (no recurrence within a day)']);
      }
      return joinText(parts.flatMap((p, i) => (i > 0 ? [' · ', ...p] : p)));
    });
  // Episodes not shown, and opens older than the ledger keeps per trigger (bounded), for "N more".
  const more = all.length - lines.length + Math.max(0, total - found.length);
  const view: SeenBeforeView = { lines };
  if (more > 0) view.more = { count: more, path: `/ui/incidents?trigger=${encodeURIComponent(triggerKey)}`, ...(moreUrl ? { url: moreUrl } : {}) };
  return view;
}
