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
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import { accessGate, SESSION_COOKIE, sameSecret, sessionValue, type AccessOptions } from './ui-access.js';
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
  /** The typo-tolerant index `?q=` searches with (absent: a substring match on id and title). */
  textIndex?: KnowledgeOptions['textIndex'];
  /** A chat message's permalink, when its surface can make one. */
  permalink?: (transport: string, channel: string, id: string) => string | undefined;
}

type UiEnv = { Variables: { who?: string } };

const READ = ['GET', 'HEAD'];
/** Paths of the view and the methods each takes (the 405's `Allow`). */
export const UI_ROUTES: Record<string, string> = {
  '/ui': 'GET, HEAD',
  '/ui/knowledge': 'GET, HEAD',
  '/ui/knowledge/:id': 'GET, HEAD',
  '/ui/incidents': 'GET, HEAD',
  '/ui/incidents/:openId': 'GET, HEAD',
  '/ui/gaps': 'GET, HEAD',
  '/ui/login': 'GET, HEAD',
  '/ui/static/ui.css': 'GET, HEAD',
};

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

/** The sign-in form's target as a hono app, to mount at {@link UI_SIGN_IN}. */
export function uiSignIn(opts: Pick<MemoryViewOptions, 'token'>): Hono {
  const app = new Hono();
  app.use('*', safetyHeaders);
  app.post('/', bodyLimit({ maxSize: 4096, onError: (c) => c.html(loginPage('That form was too large.'), 413) }), async (c) => {
    if (!opts.token) return c.html(messagePage('No sign-in', 'Set ui.token to sign in from other hosts (docs/memory-view.md).'), 404);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const given = typeof form['token'] === 'string' ? form['token'] : '';
    if (!given || !sameSecret(given.trim(), opts.token)) return c.html(loginPage('That token is not the UI token.'), 401);
    const secure = new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
    c.header('Set-Cookie', `${SESSION_COOKIE}=${sessionValue(opts.token)}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=43200${secure ? '; Secure' : ''}`);
    return c.redirect('/ui', 303);
  });
  app.all('*', (c) => {
    c.header('Allow', 'POST');
    return c.html(messagePage('Method not allowed', 'This is where the sign-in form posts; sign in at /ui/login.'), 405);
  });
  return app;
}

/** The memory view as a hono app, to mount at `/ui`. */
export function memoryView(opts: MemoryViewOptions): Hono<UiEnv> {
  const app = new Hono<UiEnv>();
  const gate = accessGate(opts);
  const rows = new KnowledgeRows(opts.read, {
    outcomeFloor: opts.outcomeFloor,
    staleAfterMs: opts.staleAfterMs,
    ...(opts.textIndex ? { textIndex: opts.textIndex } : {}),
  });
  const overviews = new Memo<ReturnType<typeof overview>>(opts.read, true);
  // Gaps scan every tracked trigger: at most once a minute.
  const gapViews = new Memo<ReturnType<typeof gaps>>(opts.read, false);
  const html = (c: Context<UiEnv>, body: string, status = 200): Response => c.html(body, status as 200);

  // Headers on every response under /ui, refusals included.
  app.use('*', safetyHeaders);

  // Read-only: GET and HEAD on every route (the sign-in form posts to {@link UI_SIGN_IN}, outside /ui).
  app.use('*', async (c, next) => {
    if (READ.includes(c.req.method)) return next();
    c.header('Allow', 'GET, HEAD');
    return html(c, messagePage('Method not allowed', `The memory view is read-only: ${c.req.method.slice(0, 20)} is not allowed here; use GET.`), 405);
  });

  app.on(READ, '/static/ui.css', (c) => c.body(UI_CSS, 200, { 'Content-Type': 'text/css; charset=utf-8' }));

  const loginOn = opts.token !== undefined;
  app.on(READ, '/login', (c) =>
    loginOn ? html(c, loginPage()) : html(c, messagePage('No sign-in', 'Set ui.token to sign in from other hosts (docs/memory-view.md).'), 404),
  );

  // Everything else needs access.
  app.use('*', async (c, next) => {
    const a = gate({ peer: peerOf(c), header: (n) => c.req.header(n) });
    if (!a.ok) {
      c.header('WWW-Authenticate', 'Bearer realm="reprise-ui"');
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
          row: knowledgeRow(opts.read, entry, now, opts),
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

  app.on(READ, '/incidents/:openId', (c) => {
    const openId = c.req.param('openId');
    const incident = opts.read.viewIncident(openId);
    if (!incident) return html(c, messagePage('No such incident', 'The read model keeps the newest 10,000 opens; this one is not among them.'), 404);
    const thread = opts.read.thread(openId);
    const permalinks = Object.entries(thread?.roots ?? {}).map(([transport, r]) => {
      const url = opts.permalink?.(transport, r.channel, r.id);
      return { transport, channel: r.channel, id: r.id, ...(url ? { url } : {}) };
    });
    return html(c, incidentPage({ incident, thread, permalinks }, c.get('who')));
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
