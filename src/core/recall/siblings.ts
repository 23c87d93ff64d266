/**
 * Near-sibling entries (issue 22): runbooks whose names differ by a word or two — the quota
 * variant of a resource check (`KubeCPUOvercommit` / `KubeCPUQuotaOvercommit`), "some" against
 * "any" of a set, a job that failed against one that did not complete, two error kinds of one
 * controller. Their texts share most of their vocabulary, so a BM25 lead between them says
 * little; what tells them apart is the words one name has and the other lacks, and whether
 * the alert says them. Pure and deterministic: no model, no corpus-specific word lists.
 */
import type { Entry, Incident } from '../types.js';
import { words } from '../tokenize.js';
import { IGNORED_LABEL_NAMES, QUERY_LABELS } from './build-query.js';
import { expressionFromGeneratorUrl, scanPromql } from './promql-terms.js';
import { splitAlertName } from './structural.js';

/**
 * Words that only join a name's parts (`FailedToSend`, `OutOfSpace`): never what tells two
 * names apart. Quantifiers and negations (`any`, `some`, `all`, `not`, `no`) are kept.
 */
const FILLER: ReadonlySet<string> = new Set([
  'a',
  'an',
  'the',
  'to',
  'of',
  'in',
  'on',
  'at',
  'by',
  'for',
  'from',
  'with',
  'into',
  'as',
  'is',
  'are',
  'be',
  'and',
  'or',
]);

/** An alert word may say a shorter name word it begins or ends with (a compound) from this length. */
const MIN_COMPOUND_PART = 3;
/** Two forms of one word share a prefix of at least this many letters (see `sameWord`). */
const MIN_SHARED_STEM = 5;
/** A word is said "in phrase" when a name neighbour of it is at most this many words away. */
const PHRASE_REACH = 2;

const namesOf = new WeakMap<Entry, readonly (readonly string[])[]>();

/**
 * The word lists an entry is known by: each alert name it covers, as written
 * (`KubeCPUQuotaOvercommit` → kube, cpu, quota, overcommit), and its title; stemmed like
 * search terms, filler words dropped, each word once. Entries are immutable: computed once.
 */
export function nameWordLists(e: Entry): readonly (readonly string[])[] {
  let lists = namesOf.get(e);
  if (lists === undefined) {
    const out: string[][] = [];
    const add = (ws: readonly string[]): void => {
      const u = [...new Set(ws.filter((w) => !FILLER.has(w)))];
      if (u.length > 0 && !out.some((l) => l.length === u.length && l.every((w) => u.includes(w)))) out.push(u);
    };
    for (const n of e.alertNames ?? []) add(splitAlertName(n).flatMap((p) => words(p)));
    if (e.title !== '') add(words(e.title));
    lists = out;
    namesOf.set(e, lists);
  }
  return lists;
}

/** How two entries' names compare (the pair of their names that overlaps most). */
export interface NameDiff {
  /** The two names compared, words in order. */
  a: readonly string[];
  b: readonly string[];
  /** Share of the longer name's words that both names have (1 = same words). */
  overlap: number;
  shared: readonly string[];
  /** Words of the first entry's name that the second's lacks. */
  own: readonly string[];
  /** Words of the second entry's name that the first's lacks. */
  rival: readonly string[];
}

/**
 * The closest pair of names of `a` and `b`: most overlap, then fewest distinguishing words,
 * then the first listed. Null when either has no name words.
 */
export function nameDiff(a: Entry, b: Entry): NameDiff | null {
  let best: NameDiff | null = null;
  for (const la of nameWordLists(a)) {
    for (const lb of nameWordLists(b)) {
      const shared = la.filter((w) => lb.includes(w));
      const overlap = shared.length / Math.max(la.length, lb.length);
      const own = la.filter((w) => !lb.includes(w));
      const rival = lb.filter((w) => !la.includes(w));
      if (best === null || overlap > best.overlap || (overlap === best.overlap && own.length + rival.length < best.own.length + best.rival.length)) {
        best = { a: la, b: lb, overlap, shared, own, rival };
      }
    }
  }
  return best;
}

/** What an alert says, as words: the set, and each source's words in order (for phrases). */
export interface AlertText {
  words: ReadonlySet<string>;
  runs: readonly (readonly string[])[];
  /** The alert carries its rule's PromQL expression (metric names read from `generatorURL`). */
  expression: boolean;
}

const textOf = new WeakMap<Incident, AlertText>();

/**
 * The words an alert says about itself: its name, summary and description, the names of its
 * labels and the values of its descriptive ones (the labels the query reads), and the metric
 * names of the PromQL expression in `generatorURL`. Identity labels (pod, instance,
 * namespace, cluster) say which thing, not what is wrong, and are left out. Remembered per
 * incident.
 */
export function alertText(incident: Incident, exprMaxTerms = 200): AlertText {
  let t = textOf.get(incident);
  if (t === undefined) {
    const set = new Set<string>();
    const runs: string[][] = [];
    const add = (text: string): void => {
      const ws = words(text);
      if (ws.length === 0) return;
      runs.push(ws);
      for (const w of ws) set.add(w);
    };
    add(incident.alertname);
    add(incident.title);
    if (incident.message !== incident.title) add(incident.message);
    for (const key of QUERY_LABELS) {
      const v = incident.labels[key];
      if (v) add(v);
    }
    for (const name of Object.keys(incident.labels)) if (!IGNORED_LABEL_NAMES.has(name)) add(name);
    const metrics = incident.generatorUrl ? scanPromql(expressionFromGeneratorUrl(incident.generatorUrl), exprMaxTerms).metrics : [];
    for (const m of metrics) add(m);
    t = { words: set, runs, expression: metrics.length > 0 };
    textOf.set(incident, t);
  }
  return t;
}

/** Length of the common prefix of two words. */
function prefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * Two forms of one word, beyond what the search stemmer maps together: the shorter is all
 * but at most one letter of their common prefix, and that prefix is five letters or more
 * (`reconcil` / `reconcile`, `complete` / `completion`, `expir` / `expiration`) or the longer
 * adds at most two letters to a three-letter one (`max` / `maxed`, `err` / `error`).
 */
function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  const p = prefix(a, b);
  if (p < Math.min(a.length, b.length) - 1) return false;
  return p >= MIN_SHARED_STEM || (p >= MIN_COMPOUND_PART && Math.max(a.length, b.length) - p <= 2);
}

/**
 * Whether the alert word `a` says the name word `w`: the same word or another form of it, or
 * a compound of it (`resourcequota` says `quota`, `misscheduled` says `mis`, `failures` says
 * `fail`) — unless `a` is itself a word of one of the two names (`kubelet` names the Kubelet
 * sibling; it does not say `kube`).
 */
function says(a: string, w: string, names: ReadonlySet<string>): boolean {
  if (sameWord(a, w)) return true;
  return w.length >= MIN_COMPOUND_PART && a.length > w.length && (a.startsWith(w) || a.endsWith(w)) && !names.has(a);
}

/** Whether the alert says `w` anywhere (see `says`). */
function saidAnywhere(alert: AlertText, w: string, names: ReadonlySet<string>): boolean {
  if (alert.words.has(w)) return true;
  for (const a of alert.words) if (says(a, w, names)) return true;
  return false;
}

/**
 * Whether the alert says `w` next to a word that neighbours it in `name` (at most PHRASE_REACH
 * words away): "labels limit" says `label` as `PrometheusLabelLimitHit` phrases it.
 */
function saidInPhrase(alert: AlertText, w: string, name: readonly string[], names: ReadonlySet<string>): boolean {
  const i = name.indexOf(w);
  const neighbours = [name[i - 1], name[i + 1]].filter((n): n is string => n !== undefined);
  for (const run of alert.runs) {
    for (let j = 0; j < run.length; j++) {
      if (!says(run[j]!, w, names)) continue;
      for (let k = Math.max(0, j - PHRASE_REACH); k <= Math.min(run.length - 1, j + PHRASE_REACH); k++) {
        if (k !== j && neighbours.some((n) => sameWord(run[k]!, n))) return true;
      }
    }
  }
  return false;
}

/** The sibling rule's verdict on the leading candidate against one near-sibling. */
export interface SiblingJudgement {
  /** The near-sibling's id. */
  rival: string;
  overlap: number;
  /** Words only the leading candidate's name has, and those the alert says. */
  own: readonly string[];
  ownSaid: readonly string[];
  /** Words only the sibling's name has, and those the alert says. */
  rivalOwn: readonly string[];
  rivalSaid: readonly string[];
  /** Weighted share of each side's own words the alert says (what the rule compares). */
  ownShare: number;
  rivalShare: number;
  /** Weighted share of the words both names have that the alert says: how much it describes the pair. */
  sharedShare: number;
  passed: boolean;
  reason: string;
}

const quote = (ws: readonly string[]): string => (ws.length === 0 ? '(nothing)' : ws.map((w) => `"${w}"`).join(', '));

/** How much a word tells names apart; every word alike when the catalog's name statistics are not at hand. */
export type WordWeight = (word: string) => number;

/**
 * The weight of a name word from how many of `entries` are named with it (idf over names):
 * `kube` or `target`, in many names, tell a sibling apart less than `maxed`, in one.
 */
export function nameWeight(nameFrequency: ReadonlyMap<string, number>, entries: number): WordWeight {
  return (w) => Math.log(1 + entries / Math.max(1, nameFrequency.get(w) ?? 1));
}

/**
 * Judges `top` against its near-sibling `rival` on the words that distinguish their names
 * (`diff`, from `nameDiff(top, rival)`). It passes only when the alert says some of `top`'s
 * own words and more of them than of `rival`'s (as a share, each word weighed by `weight`:
 * rare name words count more than ones many names share); at an equal share, when more of
 * `top`'s are said in a phrase as the name has them ("labels limit" for `LabelLimitHit`, not
 * "targets … limit"). A leader whose name is contained in its sibling's (the generic check
 * beside its quota variant) has no word of its own to be said: it passes only when the alert
 * carries its expression and nothing in it says the variant's words — alert text alone may
 * simply not spell the variant out, and a wrong runbook is worse than none.
 */
export function judgeSibling(
  top: Entry,
  rival: Entry,
  diff: NameDiff,
  incident: Incident,
  weight: WordWeight = () => 1,
  exprMaxTerms?: number,
): SiblingJudgement {
  const alert = alertText(incident, exprMaxTerms);
  const mass = (ws: readonly string[]): number => ws.reduce((a, w) => a + weight(w), 0);
  const share = (part: readonly string[], whole: readonly string[]): number => (whole.length === 0 ? 0 : mass(part) / mass(whole));
  const names = new Set([...diff.a, ...diff.b]);
  const mine = { said: diff.own.filter((w) => saidAnywhere(alert, w, names)), inPhrase: [] as string[] };
  const theirs = { said: diff.rival.filter((w) => saidAnywhere(alert, w, names)), inPhrase: [] as string[] };
  const m = share(mine.said, diff.own);
  const t = share(theirs.said, diff.rival);
  const sharedShare = share(
    diff.shared.filter((w) => saidAnywhere(alert, w, names)),
    diff.shared,
  );
  // Phrases only settle an equal share (the rarer case: they cost a pass over the alert's words).
  const tie = Math.abs(m - t) < 1e-9 && mine.said.length > 0;
  if (tie) {
    mine.inPhrase = mine.said.filter((w) => saidInPhrase(alert, w, diff.a, names));
    theirs.inPhrase = theirs.said.filter((w) => saidInPhrase(alert, w, diff.b, names));
  }
  const byPhrase = tie && share(mine.inPhrase, diff.own) > share(theirs.inPhrase, diff.rival);
  // A name contained in its sibling's (the generic check beside its variant) has no word of
  // its own to be said. It passes only when the alert is complete — it carries its rule's
  // expression, where a variant shows its own metric (`kube_resourcequota`) — and nothing in
  // it says the variant's words.
  const generic = diff.own.length === 0 && diff.rival.length > 0 && alert.expression && theirs.said.length === 0;
  const passed = generic || (mine.said.length > 0 && (m > t + 1e-9 || byPhrase));
  const head = `near-sibling ${rival.id} (names share ${quote(diff.shared)})`;
  let reason: string;
  if (generic) {
    reason = `told apart from ${head}: ${rival.id} is this name plus ${quote(diff.rival)}, which neither the alert nor its expression says`;
  } else if (passed && theirs.said.length === 0) {
    reason = `told apart from ${head}: the alert says ${quote(mine.said)}${diff.rival.length > 0 ? `, not ${quote(diff.rival)}` : ''}`;
  } else if (passed) {
    reason = `told apart from ${head}: the alert says ${quote(mine.said)} of ${quote(diff.own)}${byPhrase ? ` (${quote(mine.inPhrase)} as the name has it)` : ''} against ${quote(theirs.said)} of ${quote(diff.rival)}`;
  } else if (diff.own.length === 0 && theirs.said.length === 0) {
    reason = `${head}: ${rival.id} is this name plus ${quote(diff.rival)}; the alert does not say them, but it carries no expression to tell which one it is`;
  } else if (mine.said.length === 0 && theirs.said.length === 0) {
    reason = `${head}: the alert says neither ${quote(diff.own)} nor ${quote(diff.rival)}`;
  } else if (mine.said.length === 0) {
    reason = `${head}: the alert says ${quote(theirs.said)}, which only ${rival.id} is named by${diff.own.length > 0 ? `, and none of ${quote(diff.own)}` : ''}`;
  } else {
    reason = `${head}: the alert says ${quote(mine.said)} of ${quote(diff.own)} and ${quote(theirs.said)} of ${quote(diff.rival)}: it could be either`;
  }
  return {
    rival: rival.id,
    overlap: diff.overlap,
    own: diff.own,
    ownSaid: mine.said,
    rivalOwn: diff.rival,
    rivalSaid: theirs.said,
    ownShare: m,
    rivalShare: t,
    sharedShare,
    passed,
    reason,
  };
}
