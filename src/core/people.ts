/**
 * People, shown one way per surface (issue 28 item 2). A person is a surface and that surface's
 * stable id (`slack` + `U0ANN`, `matrix` + `@ann:example.org`, `cli` + an OS user name) — never
 * a name a payload carried (Slack's legacy `user_name`, a typed `--user`), which is how one
 * person showed as `@U0ANN` on one line and `@u0ann` on the next.
 *
 * A view names a person with a {@link PersonRun} inline run; each renderer decides how that
 * surface shows one of its own people (a Slack `<@U…>` mention, a Matrix pill) and shows
 * everyone else — and every plain-text output: PR bodies, postmortems, `/ui`, the console — by
 * display name, looked up by the surface's directory ({@link PeopleNames}), else by the bare id.
 * Names are text like every other string in a view: renderers escape them.
 */

/** A person as the surfaces know them: the surface and its stable id. */
export interface PersonRef {
  /** `slack`, `matrix`, `cli`, `pagerduty`, `console`… */
  via: string;
  /** The surface's stable id: Slack `U…`/`W…`, Matrix `@local:server`, the CLI's user name. */
  id: string;
}

/** A person named in a view; `name` is the display name known when the view was rendered. */
export interface Person extends PersonRef {
  name?: string;
  /**
   * For a person an entry's credit line names by display name (`via: 'entry'`): the surface the
   * line says they were on (`— from ann via Slack` → `slack`). A directory that knows exactly
   * one person of that surface by that name resolves them to their id ({@link withNames}).
   */
  from?: string;
}

/** An inline run naming a person (see thread-view's `Inline`). */
export interface PersonRun {
  person: Person;
}

/** Display names known now (a cache): synchronous, so no render ever waits on a lookup. */
export interface PeopleNames {
  /** The person's display name, if it is known; undefined sends the renderer to the id. */
  nameOf(p: PersonRef): string | undefined;
  /**
   * The id of the one person of surface `via` known now by display name `name`; undefined when
   * no one is, or more than one is (a name is not an identity: an ambiguous one stays a name).
   */
  idOf?(via: string, name: string): string | undefined;
}

/** The longest display name shown: a name is a label, not a paragraph. */
export const MAX_NAME = 64;

const SURFACES = new Set(['slack', 'matrix', 'console', 'pagerduty', 'cli']);
/** What a surface's name looks like (a transport's `name`). */
const SURFACE_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/** The ledger's `user` for a person: surface-qualified (`slack:U0ANN`), the CLI's name as is. */
export function personKey(p: PersonRef): string {
  return p.via === 'cli' ? p.id : `${p.via}:${p.id}`;
}

/**
 * A person from the ledger's `user` (and the event's `via`, when it has one): `slack:U0ANN` →
 * slack + `U0ANN`; a CLI user name stays itself. The inverse of {@link personKey}.
 */
export function personFromKey(user: string, via?: string): PersonRef {
  if (via !== undefined && via !== 'cli' && user.startsWith(`${via}:`)) return { via, id: user.slice(via.length + 1) };
  const colon = user.indexOf(':');
  const prefix = colon > 0 ? user.slice(0, colon) : '';
  // Without the event's surface (or from the CLI, naming a chat person), the prefix says it: a known
  // surface's, or any surface name's (`rec:U-alice`) — a CLI user name is never surface-qualified.
  const named = SURFACES.has(prefix) || SURFACE_NAME.test(prefix);
  if (named && prefix !== 'cli' && (via === undefined || via === 'cli') && colon < user.length - 1) return { via: prefix, id: user.slice(colon + 1) };
  return { via: via ?? 'cli', id: user };
}

/** A display name fit to show: one line, no surrounding space, at most {@link MAX_NAME} characters; '' when nothing is left. */
export function cleanName(name: string | undefined): string {
  if (typeof name !== 'string') return '';
  const one = name
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
  const points = Array.from(one);
  return points.length <= MAX_NAME ? one : `${points.slice(0, MAX_NAME - 1).join('')}…`;
}

/**
 * How plain text names a person: the display name, else the id without the surface's own
 * sigil noise (a Matrix id keeps its `@local:server` form — it is what the person types).
 */
export function personLabel(p: Person): string {
  return cleanName(p.name) || p.id;
}

/**
 * Fills in the display names of a view's person runs from what `names` knows now; every
 * other value is returned as it is (the same object when nothing changed). Views are JSON, so
 * this walks plain arrays and objects only.
 */
export function withNames<T>(value: T, names: PeopleNames | undefined): T {
  if (!names) return value;
  return fill(value, names) as T;
}

function fill(v: unknown, names: PeopleNames): unknown {
  if (Array.isArray(v)) {
    let changed = false;
    const out = v.map((x) => {
      const y = fill(x, names);
      if (y !== x) changed = true;
      return y;
    });
    return changed ? out : v;
  }
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const p = o['person'];
  if (Object.keys(o).length === 1 && isPerson(p)) {
    // An entry's credit names a person of a surface by display name: that surface's person when
    // the directory knows exactly one by that name (shown the surface's way: a mention, a pill).
    const { from, name: credited } = p;
    const resolved = p.via === 'entry' && from && credited ? names.idOf?.(from, credited) : undefined;
    if (from && credited && resolved) return { person: { via: from, id: resolved, name: cleanName(names.nameOf({ via: from, id: resolved })) || credited } };
    // The directory's name wins over the one the event carried: it is the surface's current one.
    const name = cleanName(names.nameOf(p));
    return name && name !== p.name ? { person: { ...p, name } } : v;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) {
    const y = fill(x, names);
    if (y !== x) changed = true;
    out[k] = y;
  }
  return changed ? out : v;
}

function isPerson(p: unknown): p is Person {
  if (p === null || typeof p !== 'object') return false;
  const o = p as Record<string, unknown>;
  return typeof o['via'] === 'string' && typeof o['id'] === 'string';
}

/** Every person a view names (for looking their names up before a plain-text render). */
export function peopleIn(value: unknown, out: PersonRef[] = []): PersonRef[] {
  if (Array.isArray(value)) for (const x of value) peopleIn(x, out);
  else if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const p = o['person'];
    if (Object.keys(o).length === 1 && isPerson(p)) {
      if (!out.some((q) => q.via === p.via && q.id === p.id)) out.push({ via: p.via, id: p.id });
    } else for (const x of Object.values(o)) peopleIn(x, out);
  }
  return out;
}

/** "Ann", "Ann and Bob", "Ann, Bob and Cy", "Ann, …, Eve and 2 more": runs, names never joined into one string. */
export function peopleList<R>(runs: readonly R[], max = 5): Array<R | string> {
  const shown = runs.slice(0, max);
  const more = runs.length - shown.length;
  const out: Array<R | string> = [];
  shown.forEach((r, i) => {
    if (i > 0) out.push(more === 0 && i === shown.length - 1 ? ' and ' : ', ');
    out.push(r);
  });
  if (more > 0) out.push(` and ${more} more`);
  return out;
}

/** A person a chat message names by id, as the adapters leave it in the text (`@U0BOB`, `@bob:example.org`). */
const MENTIONED: Record<string, RegExp> = {
  slack: /(?<![\w@])@([UW][A-Z0-9]{2,30})\b/g,
  matrix: /(?<![\w@])(@[a-z0-9._=/+-]{1,255}:[a-z0-9.-]{1,255}(?::\d{1,5})?)/gi,
};

/** The people `text` (written on surface `via`) names by their surface id. */
export function peopleMentioned(text: string, via: string): PersonRef[] {
  const re = MENTIONED[via];
  if (!re) return [];
  const ids = new Set(Array.from(text.matchAll(re), (m) => m[1]!));
  return [...ids].map((id) => ({ via, id }));
}

/**
 * A person's words with the ids they mention replaced by display names where `names` knows
 * them (`thanks @U0BOB` → `thanks @Bob Example`): what a document or a recalled entry shows in
 * place of an id nobody reads. Still text: renderers keep it inert, so it pings no one.
 */
export function namesInText(text: string, via: string, names: PeopleNames): string {
  const re = MENTIONED[via];
  if (!re) return text;
  return text.replace(re, (whole, id: string) => {
    const name = cleanName(names.nameOf({ via, id }));
    return name ? `@${name}` : whole;
  });
}
