/**
 * The memory view (issue 23) at the HTTP level: a ledger seeded through the real loop (the bot
 * harness), pages served by a real Node server on 127.0.0.1 (loopback) and by `app.request`
 * with a remote peer's socket; figures checked against the ledger's own events; access,
 * methods, headers and hostile text checked on every route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { textIndexFor } from '../../../src/adapters/flexsearch/text-index.js';
import { incidentIntents, ackIntent } from '../../../src/core/bot/intent.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { serveNode, type NodeServer } from '../../../src/http/node-server.js';
import { memoryView, uiSignIn, UI_CSP, UI_SIGN_IN, type MemoryViewOptions } from '../../../src/http/ui/memory-view.js';
import { SignInLimiter } from '../../../src/http/ui/sign-in-limiter.js';
import { UiSessions } from '../../../src/http/ui/ui-sessions.js';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { alert, fixedSnapshot, incidentEntry, playbook } from '../recall/recall-fixtures.js';
import { botHarness, recordingLogger } from '../bot/bot-harness.js';

const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled',
  cause: 'cache',
  resolution: 'rollback',
});
const disk = playbook('playbooks/disk-full.md', { title: 'Disk full', alerts: ['NodeDiskFull'], body: '## Diagnosis\n\ndf -h' });
const unused = incidentEntry('incidents/never-used.md', { resource: 'other/never-used', title: 'never used', cause: 'x', resolution: 'y' });
const snapshot = fixedSnapshot([oom, disk, unused], { [oom.id]: 30, [disk.id]: 10, [unused.id]: 1 });

const HOSTILE = '<script>alert(1)</script> [click](javascript:alert(1)) \u202Egpj.exe\u200B';
const crash = (fingerprint: string, startsAt: string) =>
  alert({
    alertname: 'KubePodCrashLooping',
    fingerprint,
    labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', severity: 'warning' },
    startsAt,
  });
const hostile = (fingerprint: string, startsAt: string) =>
  alert({
    alertname: 'WeirdThing',
    fingerprint,
    labels: { namespace: 'lab', pod: 'thing-1', severity: 'warning' },
    annotations: { summary: HOSTILE, description: HOSTILE },
    startsAt,
  });

const TOKEN = 'f3a9c1d7e5b24680aa11cc33ee55ff77';
const REMOTE = { incoming: { socket: { remoteAddress: '10.1.2.3' } } };
const PROXY = { incoming: { socket: { remoteAddress: '10.0.0.9' } } };
const LOOPBACK = { incoming: { socket: { remoteAddress: '127.0.0.1' } } };

type Harness = Awaited<ReturnType<typeof botHarness>>;
let h: Harness;
let events: LedgerEvent[];
let server: NodeServer;
let base: string;

function view(over: Partial<MemoryViewOptions> = {}): Hono {
  const parent = new Hono();
  const auth = {
    sessions: new UiSessions(createStore('memory://', ''), { idleMs: 2 * 3_600_000, maxMs: 12 * 3_600_000 }),
    limiter: new SignInLimiter({ freeAttempts: 5, maxBackoffMs: 900_000 }),
  };
  const logger = recordingLogger([]);
  parent.route(UI_SIGN_IN, uiSignIn({ clock: h.clock, logger, ...auth, ...over }));
  parent.route(
    '/ui',
    memoryView({
      read: h.ledger.read,
      catalog: () => snapshot,
      clock: h.clock,
      logger,
      outcomeFloor: 0.5,
      staleAfterMs: 180 * 86_400_000,
      ...auth,
      ...over,
    }),
  );
  return parent;
}

beforeAll(async () => {
  h = await botHarness({ snapshot });
  // An instant recall, acked after 2 min, resolved after 10 min, 👍.
  await h.bot.handle(incidentIntents([crash('fp-1', '2026-01-01T00:00:00Z')]));
  await h.settle();
  const tk = crash('fp-1', '2026-01-01T00:00:00Z').triggerKey;
  h.clock.advance(120_000);
  await h.bot.handle(ackIntent({ triggerKey: tk, user: 'alice' }));
  await h.feedback({ triggerKey: tk, action: 'up', user: 'alice' });
  h.clock.advance(480_000);
  await h.bot.handle(incidentIntents([{ ...crash('fp-1', '2026-01-01T00:00:00Z'), status: 'resolved' }]));
  // A hostile alert nobody knows, twice: a recurring gap.
  h.clock.advance(3_600_000);
  await h.bot.handle(incidentIntents([hostile('fp-2', '2026-01-01T01:00:00Z')]));
  h.clock.advance(3_600_000);
  await h.bot.handle(incidentIntents([hostile('fp-3', '2026-01-01T02:00:00Z')]));
  await h.settle();
  events = await h.events();
  const app = view();
  server = serveNode(app, { logger: recordingLogger([]) });
  const { port } = await server.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await server?.close({ force: true });
  await h?.outbox.stop();
});

/** A figure's plain number: a `<data>` element's `value` (durations: its text is words), else the element's text. */
const figure = (html: string, name: string): string | undefined => {
  const m = new RegExp(`<(\\w+) [^>]*data-figure="${name}"[^>]*>([^<]*)<`).exec(html) ?? new RegExp(`data-figure="${name}"[^>]*>([^<]*)<`).exec(html);
  if (!m) return undefined;
  const tag = m[0];
  const value = /^<data /.test(tag) ? / value="([^"]*)"/.exec(tag)?.[1] : undefined;
  return value ?? m[m.length - 1];
};
const get = async (path: string): Promise<{ status: number; text: string; headers: Headers }> => {
  const res = await fetch(base + path);
  return { status: res.status, text: await res.text(), headers: res.headers };
};

const PAGES = ['/ui', '/ui/knowledge', `/ui/knowledge/${encodeURIComponent(oom.id)}`, '/ui/incidents', '/ui/gaps', '/ui/static/ui.css'];

describe('memory view pages', () => {
  it('the overview figures equal what the ledger events say', async () => {
    const opens = events.filter((e): e is Extract<LedgerEvent, { type: 'open' }> => e.type === 'open');
    const instant = opens.filter((e) => e.kind === 'recall' && e.answerKind === 'incident').length;
    const runbook = opens.filter((e) => e.answerKind === 'runbook').length;
    const investigation = opens.length - instant - runbook;
    expect(instant).toBe(1);
    expect(investigation).toBe(2);
    const { status, text } = await get('/ui?days=7');
    expect(status).toBe(200);
    expect(figure(text, 'answers-instant')).toBe(String(instant));
    expect(figure(text, 'answers-runbook')).toBe(String(runbook));
    expect(figure(text, 'answers-investigation')).toBe(String(investigation));
    expect(figure(text, 'answers-degraded')).toBe('0');
    expect(figure(text, 'answers-silenced')).toBe(String(events.filter((e) => e.type === 'noise' && e.action === 'drop' && e.reason === 'silence').length));
    expect(figure(text, 'acks')).toBe(String(events.filter((e) => e.type === 'ack').length));
    expect(figure(text, 'ack-median-s')).toBe('120');
    expect(figure(text, 'resolves')).toBe('1');
    expect(figure(text, 'resolve-median-s')).toBe('600');
    expect(figure(text, 'model-calls')).toBe('0');
    expect(figure(text, 'tokens-spent')).toBe('0');
    expect(figure(text, 'entries-total')).toBe(String(snapshot.entries.length));
    expect(figure(text, 'precision')).toBe('1');
    expect(text).toMatch(/<svg class="chart"/);
    expect(text).toContain('mean tokens of an investigation');
  });

  it('the knowledge page lists every entry with its track record and flags, filtered and paginated', async () => {
    const { status, text } = await get('/ui/knowledge');
    expect(status).toBe(200);
    for (const e of snapshot.entries) expect(text).toContain(`data-entry="${e.id}"`);
    const row = text.slice(text.indexOf(`data-entry="${oom.id}"`));
    expect(figure(row, 'recalls')).toBe(String(h.ledger.read.trackRecord(oom.id, 'incident', h.clock.now()).recalls));
    expect(figure(row, 'up')).toBe('1');
    const never = await get('/ui/knowledge?flag=never-recalled');
    expect(never.text).toContain(`data-entry="${unused.id}"`);
    expect(never.text).not.toContain(`data-entry="${oom.id}"`);
    const q = await get('/ui/knowledge?q=disk');
    expect(q.text).toContain(`data-entry="${disk.id}"`);
    expect(q.text).not.toContain(`data-entry="${oom.id}"`);
    expect((await get('/ui/knowledge?page=99')).status).toBe(200);
  });

  it('?q= with the text index lists what the words name first, then FlexSearch matches (prefix, typo), then id/title matches', async () => {
    const app = view({ textIndex: textIndexFor() });
    const page = async (q: string): Promise<string> => (await app.request(`/ui/knowledge?q=${encodeURIComponent(q)}`, {}, LOOPBACK)).text();
    const order = (text: string): string[] => [...text.matchAll(/data-entry="([^"]+)"/g)].map((m) => m[1]!);
    // The resource the words name, above the runbook that matches a word of the text.
    expect(order(await page('other/never-used disk'))[0]).toBe(unused.id);
    expect(order(await page('NodeDiskFull'))[0]).toBe(disk.id);
    // A prefix and a typo still find the runbook; the substring filter alone would not.
    expect(order(await page('diagnos'))).toContain(disk.id);
    expect(order(await page('dsik'))).toContain(disk.id);
    expect(order(await page('zzzqqq'))).toEqual([]);
  });

  it("an entry's page shows its body, history and the incidents it answered with their traces", async () => {
    const { status, text } = await get(`/ui/knowledge/${encodeURIComponent(oom.id)}`);
    expect(status).toBe(200);
    expect(text).toContain('<pre>');
    expect(text).toContain('<svg class="chart"');
    const open = events.find((e) => e.type === 'open' && e.entry === oom.id) as Extract<LedgerEvent, { type: 'open' }>;
    expect(text).toContain(`data-open="${open.id}"`);
    expect(text).toContain(`href="/ui/incidents/${open.id}"`);
    expect((await get('/ui/knowledge/nope.md')).status).toBe(404);
  });

  it('incidents list newest first with filters; one incident shows its timeline, answer and gate trace', async () => {
    const list = await get('/ui/incidents');
    const opens = events.filter((e): e is Extract<LedgerEvent, { type: 'open' }> => e.type === 'open');
    for (const o of opens) expect(list.text).toContain(`data-open="${o.id}"`);
    expect(list.text.indexOf(`data-open="${opens[2]!.id}"`)).toBeLessThan(list.text.indexOf(`data-open="${opens[0]!.id}"`));
    const onlyInstant = await get('/ui/incidents?kind=instant');
    expect(onlyInstant.text).toContain(`data-open="${opens[0]!.id}"`);
    expect(onlyInstant.text).not.toContain(`data-open="${opens[1]!.id}"`);
    const one = await get(`/ui/incidents/${opens[1]!.id}`);
    expect(one.status).toBe(200);
    expect(one.text).toContain('data-gate-trace');
    expect(one.text).toMatch(/<ol class="timeline">/);
    const recalled = await get(`/ui/incidents/${opens[0]!.id}`);
    expect(recalled.text).toContain('data-gate-trace="incident"');
    expect(recalled.text).toContain('ack');
    expect((await get('/ui/incidents/not-an-open')).status).toBe(404);
  });

  it('the gaps page names the recurring trigger with no knowledge', async () => {
    const { status, text } = await get('/ui/gaps');
    expect(status).toBe(200);
    expect(text).toContain(`data-trigger="${hostile('x', '2026-01-01T00:00:00Z').triggerKey}"`);
  });

  it('hostile alert text renders inert on every page', async () => {
    const opens = events.filter((e): e is Extract<LedgerEvent, { type: 'open' }> => e.type === 'open');
    for (const path of [...PAGES.slice(0, 5), `/ui/incidents/${opens[1]!.id}`, `/ui/incidents?trigger=${encodeURIComponent(HOSTILE)}`]) {
      const { text } = await get(path);
      expect(text, path).not.toMatch(/<script/i);
      expect(text, path).not.toMatch(/href="\s*javascript:/i);
      expect(text, path).not.toContain('\u202E');
      expect(text, path).not.toContain('\u200B');
    }
    const one = await get(`/ui/incidents/${opens[1]!.id}`);
    expect(one.text).toContain('&lt;script&gt;');
  });

  it('every response under /ui carries the CSP and the safety headers', async () => {
    for (const path of [...PAGES, '/ui/nope', '/ui/login']) {
      const { headers } = await get(path);
      expect(headers.get('content-security-policy'), path).toBe(UI_CSP);
      expect(headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(headers.get('cache-control'), path).toBe('no-store');
    }
    expect((await get('/ui/static/ui.css')).headers.get('content-type')).toContain('text/css');
  });

  it('only GET and HEAD: every other method on every route is 405', async () => {
    const routes = [...PAGES, '/ui/incidents/x', '/ui/login', '/ui/nope'];
    for (const path of routes)
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const res = await fetch(base + path, { method });
        await res.text();
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get('allow'), `${method} ${path}`).toMatch(/^GET, HEAD/);
        expect(res.headers.get('content-security-policy')).toBe(UI_CSP);
      }
    const head = await fetch(`${base}/ui`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    // The sign-in form posts outside /ui; its target takes nothing else, and says so with the same headers.
    const get = await fetch(`${base}${UI_SIGN_IN}`);
    await get.text();
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(get.headers.get('content-security-policy')).toBe(UI_CSP);
  });
});

describe('memory view access', () => {
  it('a remote request without credentials is 401 with a page saying how to get in; loopback gets in', async () => {
    const app = view();
    for (const path of PAGES.slice(0, 5)) {
      const res = await app.request(path, {}, REMOTE);
      expect(res.status, path).toBe(401);
      expect(res.headers.get('content-security-policy')).toBe(UI_CSP);
      expect(await res.text()).toContain('ui.token');
    }
    expect((await app.request('/ui', {}, LOOPBACK)).status).toBe(200);
    // No socket at all (unknown peer) is not loopback.
    expect((await app.request('/ui')).status).toBe(401);
  });

  it('with ui.token: the bearer token lets a remote in; a wrong one does not', async () => {
    const app = view({ token: TOKEN });
    expect((await app.request('/ui', { headers: { authorization: `Bearer ${TOKEN}` } }, REMOTE)).status).toBe(200);
    expect((await app.request('/ui/knowledge', { headers: { authorization: `Bearer ${TOKEN}x` } }, REMOTE)).status).toBe(401);
    expect((await app.request('/ui', {}, REMOTE)).status).toBe(401);
  });

  it('the login form sets an HttpOnly, SameSite=Strict cookie holding a random session id, never the token', async () => {
    const app = view({ token: TOKEN });
    expect((await app.request('/ui/login', {}, REMOTE)).status).toBe(200);
    const bad = await app.request(UI_SIGN_IN, { method: 'POST', body: new URLSearchParams({ token: 'wrong-wrong-wrong-wrong' }) }, REMOTE);
    expect(bad.status).toBe(401);
    expect(bad.headers.get('set-cookie')).toBeNull();
    const ok = await app.request(UI_SIGN_IN, { method: 'POST', body: new URLSearchParams({ token: TOKEN }) }, REMOTE);
    expect(ok.status).toBe(303);
    const cookie = ok.headers.get('set-cookie')!;
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).not.toContain(TOKEN);
    expect(cookie).toMatch(/^reprise_ui=[A-Za-z0-9_-]{43};/);
    const pair = cookie.split(';')[0]!;
    expect((await app.request('/ui/gaps', { headers: { cookie: pair } }, REMOTE)).status).toBe(200);
    expect((await app.request('/ui/gaps', { headers: { cookie: 'reprise_ui=forged' } }, REMOTE)).status).toBe(401);
    const https = await app.request(`https://reprise.example${UI_SIGN_IN}`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }) }, REMOTE);
    expect(https.headers.get('set-cookie')).toContain('Secure');
  });

  it('the trusted header is honoured only from a trusted proxy; a sidecar on loopback needs it too', async () => {
    const app = view({ trustedHeader: 'X-Forwarded-User', trustedProxies: ['10.0.0.0/24'] });
    const proxied = await app.request('/ui', { headers: { 'x-forwarded-user': 'carol@example.org' } }, PROXY);
    expect(proxied.status).toBe(200);
    expect(await proxied.text()).toContain('signed in as carol@example.org');
    expect((await app.request('/ui', { headers: { 'x-forwarded-user': 'mallory' } }, REMOTE)).status).toBe(401);
    expect((await app.request('/ui', {}, PROXY)).status).toBe(401);
    const sidecar = view({ trustedHeader: 'X-Forwarded-User', trustedProxies: ['127.0.0.1'] });
    expect((await sidecar.request('/ui', {}, LOOPBACK)).status).toBe(401);
    expect((await sidecar.request('/ui', { headers: { 'x-forwarded-user': 'dave' } }, LOOPBACK)).status).toBe(200);
  });
});

describe('an older ledger', () => {
  it('renders opens recorded before gate traces: "no trace recorded"', async () => {
    const old = await botHarness({ snapshot });
    await old.ledger.append({
      type: 'open',
      id: 'old-open-1',
      fingerprint: 'fp-old',
      triggerKey: 'tk-old',
      kind: 'recall',
      entry: oom.id,
      answerKind: 'incident',
      dupFingerprint: 'dup-old',
      verdict: 'action_suggested',
      resolvable: true,
      at: '2026-01-01T00:00:00Z',
    });
    const parent = new Hono();
    parent.route(
      '/ui',
      memoryView({
        read: old.ledger.read,
        catalog: () => snapshot,
        clock: old.clock,
        logger: recordingLogger([]),
        outcomeFloor: 0.5,
        staleAfterMs: 180 * 86_400_000,
      }),
    );
    for (const path of ['/ui', '/ui/incidents', '/ui/incidents/old-open-1', `/ui/knowledge/${encodeURIComponent(oom.id)}`, '/ui/gaps', '/ui/knowledge']) {
      const res = await parent.request(path, {}, LOOPBACK);
      expect(res.status, path).toBe(200);
    }
    const page = await (await parent.request('/ui/incidents/old-open-1', {}, LOOPBACK)).text();
    expect(page).toContain('data-gate-trace="none"');
    expect(page).toContain('no trace recorded');
    await old.outbox.stop();
  });
});
