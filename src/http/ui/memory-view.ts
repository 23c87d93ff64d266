/**
 * `/ui`, the read-only memory view (issue 23; docs/memory-view.md): a hono sub-app the public
 * port mounts. GET and HEAD only — the sign-in form posts to `/auth/ui` (outside `/ui`), which only sets a cookie; any
 * other method on any path under `/ui` is 405. Every response carries a strict CSP (no script
 * at all), `nosniff`, `no-referrer` and `no-store`. Pages render from the read model only
 * (ui-data.ts), so a request costs the same on a day-old ledger and a year-old one.
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { CatalogSnapshot } from '../../core/recall/catalog-snapshot.js';
import type { ChatTransport } from '../../ports/chat-transport.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import { accessGate, cookieValue, SESSION_COOKIE, sameSecret, type AccessOptions } from './ui-access.js';
import type { SignInLimiter } from './sign-in-limiter.js';
import type { UiSessions } from './ui-sessions.js';
import type { PeopleNames } from '../../core/people.js';
import { UI_CSS } from './ui-css.js';
import {
  FLAGS,
  gaps,
  incidentsPage as pageOfIncidents,
  KnowledgeRows,
  knowledgeRow,
  overview,
  PERIODS,
  Memo,
  type Flag,
  type KnowledgeOptions,
  type Period,
  type ViewReader,
} from './ui-data.js';
import { deniedPage, entryPage, gapsPage, incidentPage, incidentsPage, knowledgePage, loginPage, messagePage, overviewPage, UI_SIGN_IN } from './ui-pages.js';

export { UI_SIGN_IN };

export const UI_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface MemoryViewOptions extends AccessOptions {
  read: ViewReader;
  catalog: () => CatalogSnapshot;
  clock: Clock;
  logger: Logger;
  /** The outcome gate's floor and the staleness age (the knowledge flags). */
  outcomeFloor: number;
  staleAfterMs: number;
  /** Where sign-ins are kept: a cookie names one of its sessions. */
  sessions?: UiSessions;
  /** Wrong bearer tokens count against the peer's sign-in limit. */
  limiter?: SignInLimiter;
  /** Masks secrets in every page (the one redactor); the ledger's events are masked already. */
  redact?: (text: string) => string;
  /** When this bot first served each entry (the *stale* flag counts from it too). */
  servedSince?: KnowledgeOptions['servedSince'];
  /** A chat message's permalink, when its surface can make one (Slack asks its Web API: cached, bounded in time). */
  permalink?: (transport: string, channel: string, id: string) => Promise<string | undefined>;
  /** The typo-tolerant index `?q=` searches with (absent: a substring match on id and title). */
  textIndex?: KnowledgeOptions['textIndex'];
  /** Display names of the people pages name (the bot's cache, never waited for). */
  people?: PeopleNames;
}

type UiEnv = { Variables: { who?: string } };

/** How long an incident page waits for a surface's permalink before showing the thread unlinked. */
export const PERMALINK_WAIT_MS = 1500;

function withTimeout<T>(p: Promise<T> | undefined, ms: number): Promise<T | undefined> {
  if (!p) return Promise.resolve(undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
    timer.unref();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

const READ = ['GET', 'HEAD'];

function peerOf(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined; // no Node socket behind it (an in-process request): not loopback
  }
}

function intParam(v: string | undefined, def: number, max: number): number {
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 1 ? Math.min(n, max) : def;
}

const short = (v: string | undefined, max = 500): string | undefined => {
  const s = v?.trim();
  return s ? s.slice(0, max) : undefined;
};

/** Every response of the view and its sign-in, refusals included. */
const safetyHeaders = async (c: Context, next: () => Promise<void>): Promise<void> => {
  await next();
  c.res.headers.set('Content-Security-Policy', UI_CSP);
  c.res.headers.set('X-Content-Type-Options', 'nosniff');
  c.res.headers.set('Referrer-Policy', 'no-referrer');
  c.res.headers.set('Cache-Control', 'no-store');
  c.res.headers.set('X-Frame-Options', 'DENY');
};

/** The permalink option from the bot's chat transports: each surface that can make a link is asked. */
export function transportPermalinks(transports: Iterable<Pick<ChatTransport, 'name' | 'permalink'>>): NonNullable<MemoryViewOptions['permalink']> {
  const all = [...transports];
  return async (transport, channel, id) => all.find((t) => t.name === transport)?.permalink?.({ channel, id });
}

/** The request id the public port gave this request (http-app.ts), for the log line of a refusal. */
const requestIdOf = (c: Context): string | undefined => (c.get as (k: string) => unknown)('requestId') as string | undefined;

/** A refusal under /ui or /auth/ui, logged with its request id (issue 29 item 6). */
function logRefusal(logger: Logger, c: Context, status: number, why: string, peer: string | undefined): void {
  logger.warn({ requestId: requestIdOf(c), status, peer, path: c.req.path.slice(0, 200), why }, 'memory view request refused');
}

export interface SignInOptions {
  token?: string;
  /** Where each sign-in's session is kept; without it no cookie is issued (bearer only). */
  sessions?: UiSessions;
  limiter?: SignInLimiter;
  clock: Clock;
  logger: Logger;
}

/**
 * The sign-in form's target as a hono app, to mount at {@link UI_SIGN_IN}: `POST /` takes the
 * token and starts a new session (its own random cookie); `POST /logout` ends the cookie's.
 * Wrong tokens from one address are slowed, then refused (429 with Retry-After), and logged.
 */
export function uiSignIn(opts: SignInOptions): Hono {
  const app = new Hono();
  app.use('*', safetyHeaders);
  const refuse = (c: Context, status: number, why: string, body: string): Response => {
    logRefusal(opts.logger, c, status, why, peerOf(c));
    return c.html(body, status as 401);
  };
  const secureOf = (c: Context): boolean => new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
  app.post('/logout', async (c) => {
    await opts.sessions?.signOut(cookieValue(c.req.header('cookie'), SESSION_COOKIE));
    c.header('Set-Cookie', `${SESSION_COOKIE}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0${secureOf(c) ? '; Secure' : ''}`);
    return c.redirect('/ui/login', 303);
  });
  app.post('/', bodyLimit({ maxSize: 4096, onError: (c) => refuse(c, 413, 'sign-in form too large', loginPage('That form was too large.')) }), async (c) => {
    if (!opts.token || !opts.sessions)
      return refuse(c, 404, 'no ui.token configured', messagePage('No sign-in', 'Set ui.token to sign in from other hosts (docs/memory-view.md).'));
    const now = opts.clock.now();
    const peer = peerOf(c);
    const wait = opts.limiter?.waitMs(peer, now) ?? 0;
    if (wait > 0) {
      c.header('Retry-After', String(Math.ceil(wait / 1000)));
      return refuse(
        c,
        429,
        'too many wrong tokens from this address',
        loginPage(`Too many wrong tokens from this address: try again in ${Math.ceil(wait / 1000)} s.`),
      );
    }
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const given = typeof form['token'] === 'string' ? form['token'] : '';
    if (!given || !sameSecret(given.trim(), opts.token)) {
      const f = opts.limiter?.failed(peer, now);
      if (f && f.waitMs > 0) c.header('Retry-After', String(Math.ceil(f.waitMs / 1000)));
      return refuse(c, 401, `wrong token${f ? ` (${f.failures} in a row from this address)` : ''}`, loginPage('That token is not the UI token.'));
    }
    opts.limiter?.succeeded(peer);
    const id = await opts.sessions.create(now, { ...(peer ? { peer } : {}), ...(c.req.header('user-agent') ? { agent: c.req.header('user-agent')! } : {}) });
    const maxAge = Math.floor(opts.sessions.options.maxMs / 1000);
    c.header('Set-Cookie', `${SESSION_COOKIE}=${id}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secureOf(c) ? '; Secure' : ''}`);
    opts.logger.info({ requestId: requestIdOf(c), peer }, 'memory view: signed in');
    return c.redirect('/ui', 303);
  });
  app.all('*', (c) => {
    c.header('Allow', 'POST');
    return refuse(
      c,
      405,
      `${c.req.method} on the sign-in route`,
      messagePage('Method not allowed', 'This is where the sign-in form posts; sign in at /ui/login.'),
    );
  });
  return app;
}

/** The memory view as a hono app, to mount at `/ui`. */
export function memoryView(opts: MemoryViewOptions): Hono<UiEnv> {
  const app = new Hono<UiEnv>();
  const gate = accessGate(opts);
  const knowledge: KnowledgeOptions = {
    outcomeFloor: opts.outcomeFloor,
    staleAfterMs: opts.staleAfterMs,
    ...(opts.servedSince ? { servedSince: opts.servedSince } : {}),
    ...(opts.textIndex ? { textIndex: opts.textIndex } : {}),
  };
  const rows = new KnowledgeRows(opts.read, knowledge);
  const overviews = new Memo<ReturnType<typeof overview>>(opts.read, true);
  // Gaps scan every tracked trigger: at most once a minute.
  const gapViews = new Memo<ReturnType<typeof gaps>>(opts.read, false);
  const html = (c: Context<UiEnv>, body: string, status = 200): Response => c.html(opts.redact ? opts.redact(body) : body, status as 200);

  // Headers on every response under /ui, refusals included.
  app.use('*', safetyHeaders);

  // Read-only: GET and HEAD on every route (the sign-in form posts to {@link UI_SIGN_IN}, outside /ui).
  app.use('*', async (c, next) => {
    if (READ.includes(c.req.method)) return next();
    c.header('Allow', 'GET, HEAD');
    logRefusal(opts.logger, c, 405, `${c.req.method.slice(0, 20)} on the read-only view`, peerOf(c));
    return html(c, messagePage('Method not allowed', `The memory view is read-only: ${c.req.method.slice(0, 20)} is not allowed here; use GET.`), 405);
  });

  app.on(READ, '/static/ui.css', (c) => c.body(UI_CSS, 200, { 'Content-Type': 'text/css; charset=utf-8' }));

  const loginOn = opts.token !== undefined;
  app.on(READ, '/login', (c) =>
    loginOn ? html(c, loginPage()) : html(c, messagePage('No sign-in', 'Set ui.token to sign in from other hosts (docs/memory-view.md).'), 404),
  );

  // Everything else needs access.
  app.use('*', async (c, next) => {
    const peer = peerOf(c);
    const a = await gate({ peer, header: (n) => c.req.header(n), now: opts.clock.now() });
    if (!a.ok) {
      if (a.retryAfterMs !== undefined) {
        c.header('Retry-After', String(Math.ceil(a.retryAfterMs / 1000)));
        logRefusal(opts.logger, c, 429, a.why, peer);
        return html(c, messagePage('Too many tries', `Too many wrong tokens from this address: try again in ${Math.ceil(a.retryAfterMs / 1000)} s.`), 429);
      }
      c.header('WWW-Authenticate', 'Bearer realm="reprise-ui"');
      logRefusal(opts.logger, c, 401, a.why, peer);
      return html(c, deniedPage({ token: loginOn, ...(opts.trustedHeader ? { header: opts.trustedHeader } : {}) }), 401);
    }
    if (a.who) c.set('who', a.who);
    await next();
    return undefined;
  });

  app.on(READ, '/', (c) => {
    const days = (PERIODS as readonly number[]).includes(Number(c.req.query('days'))) ? (Number(c.req.query('days')) as Period) : 30;
    const now = opts.clock.now();
    return html(
      c,
      overviewPage(
        overviews.get(now, String(days), () => overview(opts.read, now, days)),
        opts.catalog().entries.length,
        c.get('who'),
      ),
    );
  });

  app.on(READ, '/knowledge', (c) => {
    const snapshot = opts.catalog();
    const flagQ = c.req.query('flag');
    const flag = (FLAGS as readonly string[]).includes(flagQ ?? '') ? (flagQ as Flag) : undefined;
    const q = short(c.req.query('q'), 200);
    const kind = short(c.req.query('kind'), 40);
    const f = { ...(flag ? { flag } : {}), ...(q ? { q } : {}), ...(kind ? { kind } : {}) };
    const got = rows.page(snapshot, opts.clock.now(), f, intParam(c.req.query('page'), 1, 1_000_000));
    const kinds = [...new Set(snapshot.entries.map((e) => e.type))].sort();
    return html(c, knowledgePage(got.rows, got.total, snapshot.entries.length, got.page, f, kinds, c.get('who')));
  });

  app.on(READ, '/knowledge/:id{.+}', (c) => {
    const id = c.req.param('id');
    const entry = opts.catalog().byId.get(id);
    if (!entry) return html(c, messagePage('No such entry', `The served catalog has no entry ${id.slice(0, 300)}.`), 404);
    const now = opts.clock.now();
    const hist = opts.read.viewEntry(id);
    const incidents = [...(hist?.opens ?? [])]
      .reverse()
      .map((o) => opts.read.viewIncident(o))
      .filter((i) => i !== undefined);
    return html(
      c,
      entryPage(
        {
          entry,
          row: knowledgeRow(opts.read, entry, now, knowledge),
          weeks: (hist?.weeks ?? []) as unknown as ReadonlyArray<readonly [string, number, number, number, number]>,
          incidents,
        },
        c.get('who'),
      ),
    );
  });

  app.on(READ, '/incidents', (c) => {
    const trigger = short(c.req.query('trigger'));
    const kindQ = c.req.query('kind');
    const kind = ['instant', 'runbook', 'investigation', 'degraded'].includes(kindQ ?? '') ? kindQ : undefined;
    const f = { ...(trigger ? { trigger } : {}), ...(kind ? { kind } : {}) };
    const page = intParam(c.req.query('page'), 1, 10_000);
    const { items, total } = pageOfIncidents(opts.read, f, page);
    return html(c, incidentsPage(items, total, opts.read.viewIncidentCount(), page, f, c.get('who')));
  });

  app.on(READ, '/incidents/:openId', async (c) => {
    const openId = c.req.param('openId');
    const incident = opts.read.viewIncident(openId);
    if (!incident) return html(c, messagePage('No such incident', 'The read model keeps the newest 10,000 opens; this one is not among them.'), 404);
    const thread = opts.read.thread(openId);
    const permalinks = await Promise.all(
      Object.entries(thread?.roots ?? {}).map(async ([transport, r]) => {
        // A surface that cannot say (down, slow, no such message) leaves the thread named, not linked.
        const url = await withTimeout(opts.permalink?.(transport, r.channel, r.id), PERMALINK_WAIT_MS).catch(() => undefined);
        return { transport, channel: r.channel, id: r.id, ...(url ? { url } : {}) };
      }),
    );
    // The kind of each KB PR (note, fix, postmortem, finding): the curation item that filed or commented on it.
    const prKinds = new Map<string, { subject: string; decision: string }>();
    const cur = opts.read.viewCuration();
    // What the PR was filed for first; a PR known only by this incident's comment on it, as that comment.
    for (const x of cur.prs) if (x.url && !prKinds.has(x.url)) prKinds.set(x.url, { subject: x.subject, decision: x.decision });
    for (const x of cur.recent) if (x.url && x.openId === openId && !prKinds.has(x.url)) prKinds.set(x.url, { subject: x.subject, decision: x.decision });
    return html(c, incidentPage({ incident, thread, permalinks, prKinds, ...(opts.people ? { names: opts.people } : {}) }, c.get('who')));
  });

  app.on(READ, '/gaps', (c) =>
    html(
      c,
      gapsPage(
        gapViews.get(opts.clock.now(), '', () => gaps(opts.read)),
        opts.read.viewCuration(),
        c.get('who'),
      ),
    ),
  );

  // Mounted with app.route(), a sub-app's notFound is not used: this catches the rest of /ui.
  app.all('*', (c) => html(c, messagePage('Not found', 'No page here.'), 404));
  app.onError((err, c) => {
    opts.logger.error({ err, path: c.req.path.slice(0, 200) }, `memory view failed: ${err instanceof Error ? err.message : String(err)}`);
    return html(c, messagePage('Something went wrong', 'The page could not be rendered; the bot logged why.'), 500);
  });
  return app;
}
