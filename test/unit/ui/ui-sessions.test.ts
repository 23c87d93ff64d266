/**
 * Memory-view sign-in (issue 29 item 6 "Done when"): two sign-ins give two different cookies; a
 * signed-out, revoked, idle or too-old session is refused; sessions survive a restart on a
 * durable store; 100 wrong tokens in a row from one address are slowed, then refused (429), and
 * every refusal under /ui and /auth/ui is logged with its request id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { createHttpApp } from '../../../src/http/http-app.js';
import { memoryView, uiSignIn, UI_SIGN_IN } from '../../../src/http/ui/memory-view.js';
import { SignInLimiter } from '../../../src/http/ui/sign-in-limiter.js';
import { UiSessions } from '../../../src/http/ui/ui-sessions.js';
import { LedgerReader } from '../../../src/core/ledger/ledger-reader.js';
import { ManualClock } from '../../../src/ports/clock.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { fixedSnapshot } from '../recall/recall-fixtures.js';
import { recordingLogger } from '../bot/bot-harness.js';

const TOKEN = 'f3a9c1d7e5b24680aa11cc33ee55ff77';
const HOUR = 3_600_000;
const REMOTE = { incoming: { socket: { remoteAddress: '10.1.2.3' } } };
const OTHER = { incoming: { socket: { remoteAddress: '10.9.9.9' } } };

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(store: KeyValueStore = createStore('memory://', ''), clock = new ManualClock('2026-03-01T08:00:00Z')) {
  const warnings: unknown[] = [];
  const logger = recordingLogger([], warnings);
  const sessions = new UiSessions(store, { idleMs: 2 * HOUR, maxMs: 12 * HOUR });
  const limiter = new SignInLimiter({ freeAttempts: 5, maxBackoffMs: 15 * 60_000 });
  const { app } = createHttpApp({ logger });
  app.route(UI_SIGN_IN, uiSignIn({ token: TOKEN, sessions, limiter, clock, logger }));
  app.route(
    '/ui',
    memoryView({
      read: LedgerReader.empty(24 * HOUR),
      catalog: () => fixedSnapshot([], {}),
      clock,
      logger,
      outcomeFloor: 0.5,
      staleAfterMs: 180 * 86_400_000,
      token: TOKEN,
      sessions,
      limiter,
    }),
  );
  const signIn = async (token = TOKEN, peer = REMOTE) =>
    app.request(UI_SIGN_IN, { method: 'POST', body: new URLSearchParams({ token }), headers: { 'user-agent': 'test-browser' } }, peer);
  const cookieOf = (res: Response): string => res.headers.get('set-cookie')!.split(';')[0]!;
  const page = async (cookie: string | undefined, peer = REMOTE) => app.request('/ui/gaps', cookie ? { headers: { cookie } } : {}, peer);
  const refusals = () =>
    warnings.filter((w) => (w as { requestId?: unknown }).requestId !== undefined) as Array<{ requestId: string; status: number; why: string }>;
  return { app, clock, sessions, signIn, cookieOf, page, refusals, warnings };
}

describe('memory-view sessions', () => {
  it('two sign-ins give two different cookies, each a session of its own; a signed-out one is refused, the other still works', async () => {
    const s = setup();
    const a = await s.signIn();
    const b = await s.signIn();
    expect([a.status, b.status]).toEqual([303, 303]);
    const [ca, cb] = [s.cookieOf(a), s.cookieOf(b)];
    expect(ca).not.toBe(cb);
    expect(ca).not.toContain(TOKEN);
    expect((await s.page(ca)).status).toBe(200);
    expect((await s.page(cb)).status).toBe(200);
    expect(await s.sessions.list(s.clock.now())).toHaveLength(2);
    const out = await s.app.request(`${UI_SIGN_IN}/logout`, { method: 'POST', headers: { cookie: ca } }, REMOTE);
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await s.page(ca)).status).toBe(401);
    expect((await s.page(cb)).status).toBe(200);
    // A cookie the bot did not issue, or one shaped like it, is no session.
    expect((await s.page('reprise_ui=forged')).status).toBe(401);
    expect((await s.page(`reprise_ui=${'A'.repeat(43)}`)).status).toBe(401);
  });

  it('refuses a session idle past session_idle, and one older than session_max however much it is used', async () => {
    const s = setup();
    const idle = s.cookieOf(await s.signIn());
    const busy = s.cookieOf(await s.signIn());
    for (let i = 0; i < 11; i++) {
      s.clock.advance(HOUR);
      expect((await s.page(busy)).status, `hour ${i + 1}`).toBe(200);
    }
    expect((await s.page(idle)).status).toBe(401);
    s.clock.advance(HOUR);
    expect((await s.page(busy)).status).toBe(401);
    expect(s.refusals().map((r) => r.why)).toEqual(
      expect.arrayContaining([expect.stringMatching(/idle longer than ui.session_idle/), expect.stringMatching(/older than ui.session_max/)]),
    );
  });

  it('revokes one session by the id the list shows, or all of them', async () => {
    const s = setup();
    const cookies = [s.cookieOf(await s.signIn()), s.cookieOf(await s.signIn()), s.cookieOf(await s.signIn())];
    const listed = await s.sessions.list(s.clock.now());
    expect(listed.map((x) => x.id)).toHaveLength(3);
    expect(listed[0]).toMatchObject({ peer: '10.1.2.3', agent: 'test-browser' });
    await expect(s.sessions.revoke({ prefix: 'zz' }, s.clock.now())).rejects.toThrow(/not a session id/);
    await expect(s.sessions.revoke({ prefix: 'abcdef0' }, s.clock.now())).rejects.toThrow(/no live session/);
    const [gone] = await s.sessions.revoke({ prefix: listed[0]!.id.slice(0, 8) }, s.clock.now());
    expect(gone?.id).toBe(listed[0]!.id);
    expect((await s.page(cookies[0])).status).toBe(401);
    expect((await s.page(cookies[1])).status).toBe(200);
    expect(await s.sessions.revoke({ all: true }, s.clock.now())).toHaveLength(2);
    for (const c of cookies) expect((await s.page(c)).status).toBe(401);
  });

  it('survives a restart on a durable store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reprise-ui-sessions-'));
    dirs.push(dir);
    const first = createStore(undefined, dir);
    const s1 = setup(first);
    const cookie = s1.cookieOf(await s1.signIn());
    await first.close();
    const again = createStore(undefined, dir);
    const s2 = setup(again, s1.clock);
    expect((await s2.page(cookie)).status).toBe(200);
    await again.close();
  });

  it('100 wrong tokens in a row from one address: slowed after 5, then refused with Retry-After, each logged with its request id; other addresses unaffected', async () => {
    const s = setup();
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await s.signIn(`wrong-${i}-xxxxxxxxxxxxxxxx`)).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.filter((x) => x === 429).length).toBeGreaterThanOrEqual(90);
    // Even the right token waits its turn: a guesser cannot tell it from a wrong one.
    const right = await s.signIn();
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    // As a bearer on /ui too.
    expect((await s.app.request('/ui/gaps', { headers: { authorization: 'Bearer nope-nope-nope-nope' } }, REMOTE)).status).toBe(429);
    // Another address signs in at once.
    expect((await s.signIn(TOKEN, OTHER)).status).toBe(303);
    const logged = s.refusals();
    expect(logged.length).toBeGreaterThanOrEqual(102);
    expect(new Set(logged.map((l) => l.requestId)).size).toBe(logged.length);
    expect(logged.filter((l) => l.status === 429).length).toBeGreaterThanOrEqual(90);
    // After the wait, the right token gets in and the address starts afresh.
    s.clock.advance(16 * 60_000);
    expect((await s.signIn()).status).toBe(303);
    expect((await s.signIn('wrong-again-xxxxxxxxxxxx')).status).toBe(401);
  });

  it('logs every refusal under /ui with its request id (no credentials, wrong method)', async () => {
    const s = setup();
    const r1 = await s.page(undefined);
    const r2 = await s.app.request('/ui/gaps', { method: 'DELETE' }, REMOTE);
    const r3 = await s.app.request(UI_SIGN_IN, { method: 'GET' }, REMOTE);
    expect([r1.status, r2.status, r3.status]).toEqual([401, 405, 405]);
    const ids = [r1, r2, r3].map((r) => r.headers.get('x-request-id'));
    expect(s.refusals().map((l) => l.requestId)).toEqual(ids);
  });
});
