/**
 * The memory view in a real browser (issue 23 item 4): Debian's chromium, driven by
 * playwright-core, against `reprise serve` on 127.0.0.1 over a ledger seeded through the real
 * loop (test/helpers/seed-ledger.ts). Each page opens; the figures it shows (`data-figure`)
 * equal what `reprise ledger events` says; entry → incident → gate trace is clicked through;
 * every response carries the strict CSP; no script runs (no dialog, no console error, no
 * `<script>` element, no `javascript:` href) while the hostile alert's text is shown as text;
 * the phone viewport in dark and light does not scroll sideways. Screenshots are written to a
 * temp folder, or to docs/img/memory-view-{overview,knowledge,entry,incidents,incident,gaps,phone-dark}.png with REPRISE_UPDATE_SCREENSHOTS=1 (install
 * Debian's fonts-noto-color-emoji first, or the answer kinds' emoji show as empty boxes).
 *
 * One browser and one bot for the file. Skipped with the reason when no chromium is found,
 * unless REPRISE_REQUIRE_CHROMIUM=1 (.ci/run sets it after installing chromium).
 */
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE, HOSTILE_ENTRY, seedLedger, type SeededLedger } from '../helpers/seed-ledger.js';
import { ledgerEvents } from '../integration/helpers/chat-e2e.js';
import { cleanup, makeTmpDir, REPO_ROOT, spawnBot, type BotProcess } from '../integration/helpers/spawn-bot.js';
import { findChromium, launchChromium, NO_CHROMIUM_REASON } from './chromium.js';
import { figuresFromEvents, periodDays, type EventRow, type Figures } from './ledger-figures.js';

/** The few DOM names the callbacks run in the page use (the project compiles without the DOM lib). */
interface DomElement {
  tagName: string;
  attributes: ArrayLike<{ name: string; value: string }>;
  href?: string;
}
declare const document: {
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  documentElement: { scrollWidth: number; clientWidth: number };
  body: unknown;
};
declare function getComputedStyle(el: unknown): { backgroundColor: string };

const CHROMIUM = findChromium();
const CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const OOM_ENTRY = 'incidents/checkout-api-oomkilled.md';
/** Screenshots stay small: a PNG of a text page at this size is well under 200 KB. */
const DESKTOP = { width: 1100, height: 760 };
const PHONE = { width: 375, height: 812 };
const SHOT_LIMIT_BYTES = 200 * 1024;

let seed: SeededLedger;
let bot: BotProcess;
let browser: Browser;
let rows: EventRow[];
let shotsDir: string;
/** Everything that would mean a script ran or the page broke, across every page of the file. */
const incidents: string[] = [];

/** A context whose pages record dialogs, console errors and page errors into `incidents`. */
async function watchedContext(opts: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport: DESKTOP, ...opts });
  ctx.on('page', (p) => watch(p));
  return ctx;
}

function watch(p: Page): void {
  p.on('dialog', (d) => {
    incidents.push(`dialog ${d.type()}: ${d.message()} on ${p.url()}`);
    void d.dismiss();
  });
  p.on('console', (m) => {
    if (m.type() === 'error') incidents.push(`console error on ${p.url()}: ${m.text()}`);
  });
  p.on('pageerror', (e) => incidents.push(`page error on ${p.url()}: ${e.message}`));
}

/** Opens `path`, expects 200 HTML with the security headers, returns the response. */
async function open(page: Page, path: string): Promise<Response> {
  const res = await page.goto(`${bot.url}${path}`, { waitUntil: 'load' });
  expect(res, `a response for ${path}`).not.toBeNull();
  expect(res!.status(), `${path}: ${await res!.text().catch(() => '')}`.slice(0, 500)).toBe(200);
  const h = res!.headers();
  expect(h['content-type'], path).toMatch(/^text\/html/);
  expect(h['content-security-policy'], path).toBe(CSP);
  expect(h['x-content-type-options'], path).toBe('nosniff');
  expect(h['referrer-policy'], path).toBe('no-referrer');
  expect(h['cache-control'], path).toMatch(/no-store/);
  return res!;
}

/**
 * The page's figures (`data-figure` outside any `data-entry` / `data-open` row: a row's own
 * figures are per row), each a plain number, by name; a name shown twice says the same twice.
 */
async function figuresOn(page: Page): Promise<Record<string, number>> {
  const pairs = await page.$$eval('[data-figure]:not([data-entry] [data-figure]):not([data-open] [data-figure])', (els) =>
    // A duration is a <data> element: its text is words (`3 h 20 min`), its value the seconds.
    els.map((e) => [e.getAttribute('data-figure') ?? '', (e.tagName === 'DATA' ? (e.getAttribute('value') ?? '') : (e.textContent ?? '')).trim()] as const),
  );
  const out: Record<string, number> = {};
  for (const [name, text] of pairs) {
    const n = Number(text.replace(/[,\s\u202f]/g, ''));
    expect(Number.isFinite(n), `data-figure="${name}" holds a plain number, not ${JSON.stringify(text)}`).toBe(true);
    if (name in out) expect(n, `data-figure="${name}" says the same wherever it appears`).toBe(out[name]);
    out[name] = n;
  }
  return out;
}

/** No script can have run from the markup: no script element, no inline handler, no javascript: URL anywhere. */
async function expectInert(page: Page): Promise<void> {
  const found = await page.evaluate(() => {
    const bad: string[] = [];
    if (document.querySelectorAll('script').length > 0) bad.push('a <script> element');
    for (const el of Array.from(document.querySelectorAll('*'))) {
      for (const a of Array.from(el.attributes)) {
        if (/^on/i.test(a.name)) bad.push(`${el.tagName} ${a.name}=`);
        if (/^\s*javascript:/i.test(a.value)) bad.push(`${el.tagName} ${a.name}="${a.value}"`);
      }
    }
    for (const el of Array.from(document.querySelectorAll('iframe, object, embed'))) bad.push(`an <${el.tagName.toLowerCase()}>`);
    for (const a of Array.from(document.querySelectorAll('a[href]'))) {
      const href = a.href ?? '';
      if (!/^https?:/i.test(href)) bad.push(`a link to ${href}`);
    }
    return bad;
  });
  expect(found, page.url()).toEqual([]);
}

async function shot(page: Page, name: string): Promise<void> {
  const file = join(shotsDir, `memory-view-${name}.png`);
  writeFileSync(file, await page.screenshot({ fullPage: false, type: 'png' }));
  expect(statSync(file).size, `${file} stays small`).toBeLessThanOrEqual(SHOT_LIMIT_BYTES);
}

describe.skipIf(CHROMIUM === undefined)(`the memory view in chromium${CHROMIUM === undefined ? ` (skipped: ${NO_CHROMIUM_REASON})` : ''}`, () => {
  beforeAll(async () => {
    const dir = makeTmpDir('reprise-ui-browser-');
    shotsDir = process.env['REPRISE_UPDATE_SCREENSHOTS'] === '1' ? join(REPO_ROOT, 'docs', 'img') : makeTmpDir('reprise-ui-shots-');
    const [seeded, launched] = await Promise.all([seedLedger(dir, { repoRoot: REPO_ROOT }), launchChromium(CHROMIUM!)]);
    seed = seeded;
    browser = launched;
    const config = join(dir, 'reprise.yaml');
    writeFileSync(config, `catalog:\n  dir: ${JSON.stringify(seed.catalogDir)}\n`);
    bot = await spawnBot({ dataDir: seed.dataDir, args: ['--config', config] });
    rows = (await ledgerEvents(seed.dataDir)) as EventRow[];
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await bot?.stop();
    await cleanup();
  });

  it('serves /healthz to the browser', async () => {
    // Not watched: chromium asks a JSON page for /favicon.ico, which the bot does not serve.
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const res = await page.goto(`${bot.url}/healthz`);
    expect(res?.status()).toBe(200);
    expect(JSON.parse((await page.textContent('body')) ?? '')).toEqual({ status: 'ok' });
    await ctx.close();
  });

  it('the overview shows the figures `reprise ledger events` adds up to, for the default period and ?days=7', async () => {
    const ctx = await watchedContext();
    const page = await ctx.newPage();
    await open(page, '/ui');
    const shown = await figuresOn(page);
    const now = new Date();
    const expected = (days: number): Figures => {
      const period = periodDays(now, days);
      return figuresFromEvents(rows, (iso) => period.has(new Date(iso).toISOString().slice(0, 10)));
    };
    const want = expected(30);
    // The seed holds every kind: a figure of 0 would prove nothing.
    for (const [name, n] of Object.entries(want)) expect(n, `the seed has ${name}`).toBeGreaterThan(0);
    for (const [name, n] of Object.entries(want)) expect(shown[name], `data-figure="${name}" on /ui`).toBe(n);
    await expectInert(page);
    await shot(page, 'overview');
    // Durations read as words; their seconds are only the <data> values.
    const visible = (await page.evaluate(() => (document.body as unknown as { innerText: string }).innerText)) ?? '';
    for (const name of ['ack-median-s', 'resolve-median-s']) {
      const secs = shown[name];
      if (secs !== undefined && secs >= 120) expect(visible, `${name} = ${secs} s is not shown as seconds`).not.toContain(`${secs}`);
    }
    expect(visible).toMatch(/\d+ (s|min|h|d)\b/);
    const chartHeight = await page
      .locator('svg.chart')
      .first()
      .evaluate((e) => (e as unknown as { getBoundingClientRect(): { height: number } }).getBoundingClientRect().height);
    expect(chartHeight, 'the overview chart is bounded').toBeLessThanOrEqual(200);

    await open(page, '/ui?days=7');
    const week = await figuresOn(page);
    const want7 = expected(7);
    for (const [name, n] of Object.entries(want7)) expect(week[name], `data-figure="${name}" on /ui?days=7`).toBe(n);
    expect(want7['answers-instant']).toBeLessThan(want['answers-instant']);
    await ctx.close();
  });

  it('knowledge lists every catalog entry; entry → incident → gate trace clicks through', async () => {
    const ctx = await watchedContext();
    const page = await ctx.newPage();
    await open(page, '/ui/knowledge');
    const figures = await figuresOn(page);
    expect(figures['entries-total'], 'data-figure="entries-total" on /ui/knowledge').toBe(46);
    // Emoji-only column labels carry words; the seeded catalog's 2025 dates do not make it stale on the day it is first served.
    const headers = await page.locator('th').allTextContents();
    for (const th of headers) expect(th.trim(), 'a column label in words').not.toMatch(/^\p{Extended_Pictographic}+$/u);
    expect(headers).toEqual(expect.arrayContaining(['👍 up', '👎 down']));
    expect(await page.locator('[data-flag="stale"]').count()).toBe(0);
    expect(await page.locator('[data-entry]').count()).toBeGreaterThan(0);
    await expectInert(page);

    // The OOM entry's row links to its page (searched for, to find it on whatever page it is).
    await open(page, `/ui/knowledge?q=${encodeURIComponent('crash')}`);
    await shot(page, 'knowledge');
    const row = page.locator(`[data-entry="${OOM_ENTRY}"]`);
    await expect.poll(() => row.count(), { timeout: 5_000 }).toBeGreaterThan(0);
    await Promise.all([page.waitForURL(/\/ui\/knowledge\/.+/), row.first().locator('a').first().click()]);
    expect(decodeURIComponent(new URL(page.url()).pathname)).toBe(`/ui/knowledge/${OOM_ENTRY}`);
    await expect.poll(() => page.locator('svg').count()).toBeGreaterThan(0);
    // The weekly history: one chart per count (one series each), each of bounded height however wide the page.
    const charts = page.locator('figure.chart svg.chart');
    expect(await charts.count()).toBe(4);
    for (const box of await charts.evaluateAll((els) =>
      els.map((e) => (e as unknown as { getBoundingClientRect(): { height: number } }).getBoundingClientRect().height),
    )) {
      expect(box, 'a weekly chart is at most 200 px tall').toBeLessThanOrEqual(200);
      expect(box).toBeGreaterThan(20);
    }
    expect(
      await page.locator('figure.chart svg.chart [class^="k-"]').evaluateAll((els) => new Set(els.map((e) => e.getAttribute('class'))).size),
    ).toBeGreaterThan(1);
    for (const series of await charts.evaluateAll((els) => els.map((e) => e.getAttribute('data-series') ?? ''))) expect(series).not.toContain('|');
    const answered = page.locator('[data-open]');
    const recalled = new Set(seed.opens.recalled);
    const ids = await answered.evaluateAll((els) => els.map((e) => e.getAttribute('data-open') ?? ''));
    expect(ids.length, 'the entry lists the incidents it answered').toBeGreaterThan(0);
    for (const id of ids) expect(recalled.has(id), `${id} is one of the OOM recalls`).toBe(true);
    await expectInert(page);
    await shot(page, 'entry');

    const first = answered.first();
    const openId = (await first.getAttribute('data-open'))!;
    await Promise.all([page.waitForURL(/\/ui\/incidents\/.+/), first.locator('a').first().click()]);
    expect(new URL(page.url()).pathname).toBe(`/ui/incidents/${openId}`);
    const trace = page.locator('[data-gate-trace]');
    await expect.poll(() => trace.count()).toBe(1);
    expect(await trace.isVisible()).toBe(true);
    expect(await trace.textContent()).toMatch(/structural|margin|rerank|outcome|no trace recorded/);
    // What the model spent on it: its findings' calls and tokens.
    const spent = rows.filter((r) => r.type === 'finding' && r['openId'] === openId);
    const shown = await figuresOn(page);
    expect(shown['incident-calls'], 'data-figure="incident-calls"').toBe(spent.reduce((n, r) => n + Number(r['calls']), 0));
    expect(shown['incident-tokens'], 'data-figure="incident-tokens"').toBe(spent.reduce((n, r) => n + Number(r['tokensIn']) + Number(r['tokensOut']), 0));
    await expectInert(page);
    await shot(page, 'incident');
    await ctx.close();
  });

  it('incidents and gaps render; the hostile alert and entry show their markup as text, inert', async () => {
    const ctx = await watchedContext();
    const page = await ctx.newPage();
    await open(page, '/ui/incidents');
    expect(await page.locator('[data-open]').count()).toBeGreaterThan(0);
    await expectInert(page);
    await shot(page, 'incidents');

    const hostile = seed.opens.hostile[0]!;
    await open(page, `/ui/incidents/${hostile}`);
    const text = (await page.textContent('body')) ?? '';
    expect(text).toContain('<script>alert(1)</script>');
    // Bidi and zero-width characters are shown as visible escapes, never applied.
    expect(text).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200B]/);
    await expectInert(page);
    // The javascript: runbook_url is not a link (it may be shown as text, never as an href).
    expect(await page.locator(`a[href*="${HOSTILE.runbookUrl}"]`).count()).toBe(0);

    await open(page, `/ui/knowledge/${HOSTILE_ENTRY}`);
    expect((await page.textContent('body')) ?? '').toContain('<script>alert(6)</script>');
    await expectInert(page);

    await open(page, '/ui/gaps');
    // The curator's decisions, counted by decision.
    const decisions: Record<string, number> = {};
    for (const r of rows) if (r.type === 'curated') decisions[`decision-${String(r['decision'])}`] = (decisions[`decision-${String(r['decision'])}`] ?? 0) + 1;
    expect(Object.keys(decisions).length, 'the seed has curation decisions').toBeGreaterThan(2);
    const gapFigures = await figuresOn(page);
    for (const [name, n] of Object.entries(decisions)) expect(gapFigures[name], `data-figure="${name}" on /ui/gaps`).toBe(n);
    expect(await page.locator(`a[href="${seed.prs[0]!}"]`).count(), 'the open KB PR is linked').toBeGreaterThan(0);
    // Each KB PR says what it was filed for, as the curated event's subject has it.
    const subjects = new Map(rows.filter((r) => r.type === 'curated' && typeof r['url'] === 'string').map((r) => [String(r['url']), String(r['subject'])]));
    const kinds = await page
      .locator('tr[data-pr-kind]')
      .evaluateAll((els) => els.map((e) => [e.querySelector('a')?.getAttribute('href') ?? '', e.getAttribute('data-pr-kind') ?? ''] as const));
    expect(kinds.length, 'the gaps page lists KB PRs with their kind').toBeGreaterThan(0);
    for (const [url, kind] of kinds) expect(kind.split(' · ')[0], url).toBe(subjects.get(url));
    await expectInert(page);
    await shot(page, 'gaps');
    await ctx.close();
  });

  it('reads on a phone in dark and light: no sideways scroll, the scheme is honoured', async () => {
    const backgrounds: Record<string, string> = {};
    for (const colorScheme of ['dark', 'light'] as const) {
      const ctx = await watchedContext({ viewport: PHONE, colorScheme, isMobile: true, hasTouch: true, deviceScaleFactor: 1 });
      const page = await ctx.newPage();
      for (const path of ['/ui', '/ui/knowledge', `/ui/knowledge/${OOM_ENTRY}`, `/ui/incidents/${seed.opens.recalled[0]!}`, '/ui/gaps']) {
        await open(page, path);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${path} at 375 px (${colorScheme}) scrolls sideways by ${overflow} px`).toBeLessThanOrEqual(0);
      }
      await open(page, '/ui');
      backgrounds[colorScheme] = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      if (colorScheme === 'dark') await shot(page, 'phone-dark');
      await ctx.close();
    }
    const luminance = (css: string): number => {
      const [r = 0, g = 0, b = 0] = (css.match(/\d+(\.\d+)?/g) ?? []).map(Number);
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    expect(luminance(backgrounds['dark']!), `dark ${backgrounds['dark']} vs light ${backgrounds['light']}`).toBeLessThan(luminance(backgrounds['light']!));
  });

  it('no page ran a script, raised a dialog or logged an error (CSP violations included)', () => {
    expect(incidents).toEqual([]);
  });
});
