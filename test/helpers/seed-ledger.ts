/**
 * A realistic history written through the real loop (buildLoop: the bot's one entrance, the
 * outbox, the investigation scheduler, the curation worker on the GitHub stand-in and a bare
 * git remote), into the embedded sqlite store of a data dir, for the memory view's browser
 * suite: `reprise serve` started on that data dir and the catalog written beside it shows
 * what was seeded, and `reprise ledger events` reads the same store.
 *
 * Three weeks ending an hour before `now`, on a manual clock: instant recalls that resolve
 * (and one that never does), runbook answers, fresh investigations (a scripted engine stands
 * for the model: completed with tokens spent, one degraded), silences and a firing they drop,
 * 👍/👎 on cards, acks, notes, a human fix, a curated KB PR (one left open, one closed
 * unmerged by a human), and an alert whose text is hostile (`<script>`, a `javascript:`
 * runbook_url, bidi and zero-width characters).
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleGit } from 'simple-git';
import { GitDrafts } from '../../src/adapters/git/git-drafts.js';
import { GitHubForge } from '../../src/adapters/github/github-forge.js';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import { defaultConfig } from '../../src/config/load-config.js';
import { InvestigationJobs, type InvestigationEngine } from '../../src/core/bot/investigation-jobs.js';
import { incidentIntents } from '../../src/core/bot/intent.js';
import { Routing } from '../../src/core/bot/routing.js';
import type { MessageRef } from '../../src/core/chat/chat-types.js';
import { CurationWorker } from '../../src/core/curate/curation-worker.js';
import type { Finding } from '../../src/core/investigate/finding.js';
import type { InvestigationResult } from '../../src/core/investigate/investigation-types.js';
import { emptyTally } from '../../src/core/investigate/model-call.js';
import { Ledger } from '../../src/core/ledger/ledger.js';
import type { LedgerEvent } from '../../src/core/ledger-events.js';
import type { CatalogSnapshot } from '../../src/core/recall/catalog-snapshot.js';
import type { Incident } from '../../src/core/types.js';
import { ManualClock } from '../../src/ports/clock.js';
import type { Logger } from '../../src/ports/logger.js';
import { buildLoop } from '../../src/runtime/build-loop.js';
import { loadSnapshot } from '../../src/runtime/open-catalog.js';
import { recallOptions } from '../../src/runtime/recall-options.js';
import { createBareCatalogRepo } from '../fakes/bare-catalog-repo.js';
import { startGitHubFake } from '../fakes/github-fake.js';
import { RecordingTransport } from '../unit/bot/recording-transport.js';
import { alert } from '../unit/recall/recall-fixtures.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** The hostile alert's words: each must reach the page as text, never as markup or a link. */
export const HOSTILE = {
  alertname: 'PaymentsWebhookErrors',
  summary: '<script>alert(1)</script> payments webhook failing \u202Eevil\u202C',
  description: '<img src=x onerror=alert(2)> <a href="javascript:alert(3)">click</a> zero\u200Bwidth',
  runbookUrl: 'javascript:alert(4)',
} as const;

/** The hostile catalog entry (its body is shown on its page). */
export const HOSTILE_ENTRY = 'incidents/hostile-markup-entry.md';
const HOSTILE_ENTRY_TEXT = `---
type: Incident
title: "Webhook relay <script>alert(5)</script> floods retries"
description: "A description with <b>markup</b> and a \u202Ereversed\u202C run."
resource: "payments/webhook-relay"
tags: [payments, webhook]
timestamp: 2025-11-02
status: active
alerts: [${HOSTILE.alertname}]
---
# Webhook relay floods retries <script>alert(6)</script>

## Symptom

The relay returns 5xx and [retries](javascript:alert(7)) pile up. <iframe src="https://evil.example/"></iframe>

## Cause

A bad retry policy <img src=x onerror=alert(8)>.

## Resolution

Roll back the relay: \`kubectl -n payments rollout undo deploy/webhook-relay\`.
`;

export interface SeededLedger {
  /** The data dir holding the store (`REPRISE_DATA_DIR` of serve and the CLI). */
  dataDir: string;
  /** The served catalog (main of the remote after the seed): `catalog.dir` of serve. */
  catalogDir: string;
  /** When the seeded history starts and ends. */
  from: Date;
  to: Date;
  /** Open ids by what they were. */
  opens: { recalled: string[]; runbook: string[]; investigated: string[]; degraded: string[]; hostile: string[] };
  /** KB PR URLs the curator filed. */
  prs: string[];
  events: number;
}

function silentLogger(errors: unknown[]): Logger {
  const l: Logger = { debug() {}, info() {}, warn() {}, error: (o) => void errors.push(o), child: () => l };
  return l;
}

function finding(summary: string, cause: string, confidence: number): Finding {
  return {
    summary,
    verdict: 'action_required',
    confidence,
    rootCauses: [{ cause, confidence, evidence: ['kubectl describe: last state OOMKilled, exit 137'], entities: [] }],
    suggestedActions: [{ action: 'roll back the last deploy', reversible: true }],
    ruledOut: [],
    openQuestions: [],
    dataGaps: [],
    changeRef: 'deploy 4f2a1c',
    investigator: { model: 'stand-in-model', promptHash: 'abc123def456', allowlist: [] },
    partial: false,
    verified: true,
  };
}

/** What the scripted model answers: an investigation of each fresh alert, its tokens spent; `Degraded` alerts get a degraded run. */
function scriptedEngine(clock: ManualClock): InvestigationEngine {
  let n = 0;
  return {
    run: async (req) => {
      n++;
      const at = clock.now().toISOString();
      const base = { id: `run-${n}`, trace: [], steps: [], startedAt: at, endedAt: at, queuedMs: 0 };
      const version = { model: 'stand-in-model', promptHash: 'abc123def456', allowlist: [] };
      if (req.recall) {
        const f = finding(`recalled from ${req.recall.entry.id}`, req.recall.entry.title, 0.9);
        return {
          ...base,
          status: 'completed',
          detail: 'completed',
          kind: 'recall',
          finding: f,
          version,
          usage: { calls: 2, input: 1200 + n, output: 150, costUsd: 0, unpricedCalls: 2 },
          recall: { entry: req.recall.entry.id, confidence: req.recall.confidence, confirmed: true, verify: null, delivered: true },
        } satisfies InvestigationResult;
      }
      if (req.incident.alertname.startsWith('Degraded')) {
        return {
          ...base,
          status: 'degraded',
          reason: 'model_error',
          detail: 'the model could not be reached: 503',
          kind: 'fresh',
          finding: null,
          version,
          usage: { ...emptyTally(), calls: 1 },
          degraded: { marker: 'degraded', reason: 'the model could not be reached: 503', closest: [] },
        } satisfies InvestigationResult;
      }
      const f = finding(`${req.incident.alertname}: a connection pool exhausted after deploy`, `the pool of ${req.incident.alertname} is too small`, 0.86);
      return {
        ...base,
        status: 'completed',
        detail: 'completed',
        kind: 'fresh',
        finding: f,
        version,
        usage: { calls: 4, input: 9000 + 10 * n, output: 800, costUsd: 0, unpricedCalls: 4 },
      } satisfies InvestigationResult;
    },
    rerank: async (incident, candidates) => {
      // The stand-in model's match gate: an Incident entry written for this alert on this workload, if one is a candidate.
      const values = Object.values(incident.labels);
      const hit = candidates.find(
        (c) =>
          c.entry.type === 'Incident' &&
          c.entry.alerts.some((a) => a.toLowerCase() === incident.alertname.toLowerCase()) &&
          (c.entry.resource?.name === undefined || values.some((v) => v.startsWith(c.entry.resource!.name!))),
      );
      const usage = { ...emptyTally(), calls: 1, input: 600, output: 40 };
      return hit
        ? { hit: true, entry: hit.entry, confidence: 0.9, reason: 'names the alert', trace: [], usage, steps: [] }
        : { hit: false, miss: 'none', reason: 'no candidate names the alert', trace: [], usage, steps: [] };
    },
  };
}

/** The bundled starter catalog plus the hostile entry, as the remote's first commit. */
function seedFiles(repoRoot: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirNames(dir)) {
      const p = join(dir, name);
      const r = rel === '' ? name : `${rel}/${name}`;
      if (isDir(p)) walk(p, r);
      else files[r] = readFileSync(p, 'utf8');
    }
  };
  walk(join(repoRoot, 'catalog'), '');
  files[HOSTILE_ENTRY] = HOSTILE_ENTRY_TEXT;
  return files;
}

const readdirNames = (d: string): string[] => readdirSync(d).sort();
const isDir = (p: string): boolean => statSync(p).isDirectory();

const crashLoop = (pod: string, ns: string, fp: string, status: 'firing' | 'resolved' = 'firing', startsAt?: string): Incident =>
  alert({
    alertname: 'KubePodCrashLooping',
    fingerprint: fp,
    status,
    ...(startsAt ? { startsAt } : {}),
    labels: { namespace: ns, pod, container: pod.split('-').slice(0, -2).join('-'), severity: 'warning', cluster: 'prod-eu-1' },
    annotations: { summary: `${pod} is crash looping`, description: `Pod ${ns}/${pod} is restarting.` },
  });

/**
 * Seeds `root/data` (the store) and `root/catalog` (the served catalog). `now`: the seeded
 * history ends an hour before it (the served bot runs on the real clock; the overview's
 * default period must hold it).
 */
export async function seedLedger(root: string, opts: { now?: Date; repoRoot: string }): Promise<SeededLedger> {
  const now = opts.now ?? new Date();
  const startMs = Math.floor((now.getTime() - 21 * DAY) / HOUR) * HOUR;
  const clock = new ManualClock(new Date(startMs));
  const dataDir = join(root, 'data');
  const catalogDir = join(root, 'catalog');
  mkdirSync(dataDir, { recursive: true });
  const tmp = await mkdtemp(join(tmpdir(), 'reprise-seed-'));
  const errors: unknown[] = [];
  const logger = silentLogger(errors);
  const remote = await createBareCatalogRepo(seedFiles(opts.repoRoot));
  const drafts = new GitDrafts({ remoteUrl: remote.url, workDir: join(tmp, 'work'), logger });
  const fake = await startGitHubFake({ branchExists: (b) => drafts.branchExists(b), now: () => clock.now() });
  const forge = new GitHubForge({
    repo: 'acme/kb',
    token: 'test-token',
    baseUrl: fake.url,
    logger,
    maxAttempts: 3,
    delayUnitMs: 1,
    writeSpacingMs: 0,
    maxWaitMs: 5_000,
    now: () => clock.now(),
  });
  const served = join(tmp, 'served');
  await simpleGit().clone(remote.url, served, ['--branch', 'main']);
  let catalog: CatalogSnapshot = (await loadSnapshot(served)).snapshot;
  const store = createStore(undefined, dataDir);
  const appended: LedgerEvent[] = [];
  const ledger = await Ledger.open(store, { onAppend: (evs) => void appended.push(...evs) });
  const transport = new RecordingTransport({ name: 'console' });
  const config = defaultConfig();
  /** The loop as `reprise serve` builds it: without a model (the margin gate decides recall), or with the stand-in and the curator. */
  const build = (withModel: boolean) =>
    buildLoop({
      ledger,
      catalog: () => catalog,
      clock,
      logger,
      recall: recallOptions(config),
      routing: new Routing({ transports: [{ name: 'console', defaultChannel: 'console', param: 'channel' }], rules: [], mentions: [] }),
      transports: new Map([[transport.name, transport]]),
      outbox: { baseDelayMs: 1000, maxDelayMs: 60_000 },
      ...(withModel
        ? {
            model: {
              jobs: (handle) =>
                new InvestigationJobs({ engine: scriptedEngine(clock), ledger, clock, logger, options: { investigateAfterMs: 0, outcomeFloor: 0.5 }, handle }),
            },
            curation: {
              minConfidence: 0.75,
              worker: (handle) =>
                new CurationWorker({ ledger, forge, drafts, catalog: () => catalog, clock, logger, handle, options: { baseDelayMs: 60_000 } }),
            },
          }
        : {}),
    });
  let loop = build(false);
  const startLoop = async (): Promise<void> => {
    await transport.start(async (intent) => void (await loop.bot.handle(intent)));
    loop.outbox.start();
    loop.curation?.start();
  };
  const stopLoop = async (): Promise<void> => {
    await loop.jobs?.stop();
    await loop.curation?.stop();
    await loop.outbox.stop();
  };
  await startLoop();
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 3; i++) {
      await loop.bot.idle();
      await loop.jobs?.idle();
      await loop.curation?.idle();
      loop.outbox.kick();
      await loop.outbox.idle();
    }
  };
  const opens: SeededLedger['opens'] = { recalled: [], runbook: [], investigated: [], degraded: [], hostile: [] };
  let chatEvent = 0;
  const eid = (): string => `seed-${++chatEvent}`;
  const users = [
    { id: 'U-alice', name: 'alice' },
    { id: 'U-bob', name: 'bob' },
    { id: 'U-carol', name: 'carol' },
  ];
  /** Fires, settles, and returns the open id and the thread root the card went to. */
  const fire = async (incident: Incident): Promise<{ openId: string | undefined; root: MessageRef | undefined }> => {
    const before = transport.posts.length;
    const from = appended.length;
    await loop.bot.handle(incidentIntents([incident]));
    await settle();
    const open = appended.slice(from).find((e) => e.type === 'open' && e.fingerprint === incident.fingerprint);
    return { openId: open?.type === 'open' ? open.id : undefined, root: transport.posts.length > before ? transport.posts.at(-1)!.ref : undefined };
  };
  const react = (root: MessageRef, user: (typeof users)[number], reaction: string) =>
    transport.inject({ type: 'reaction', eventId: eid(), transport: 'console', user, target: root, reaction, removed: false });
  const say = (root: MessageRef, user: (typeof users)[number], text: string) =>
    transport.inject({ type: 'message', eventId: eid(), transport: 'console', user, thread: root, channel: root.channel, text, addressed: true });

  try {
    for (let day = 0; day < 21; day++) {
      const dayStart = startMs + day * DAY;
      if (day === 7) {
        // A week in, the team configures a model (and the forge): investigations and curated PRs from here on.
        await stopLoop();
        loop = build(true);
        await startLoop();
      }
      const at = (h: number): void => {
        const target = dayStart + h * HOUR;
        if (target > clock.now().getTime()) clock.advance(target - clock.now().getTime());
      };
      // A recurring OOM kill, answered from the catalog at once (an Incident entry): acked, resolved, voted.
      at(2);
      const fp = `oom-${day}`;
      const pod = `checkout-api-7d9f8c6b5-${String(day).padStart(5, 'a')}`;
      const oom = await fire(crashLoop(pod, 'payments', fp, 'firing', clock.now().toISOString()));
      if (oom.openId) opens.recalled.push(oom.openId);
      if (oom.root) {
        clock.advance((3 + (day % 5)) * MIN);
        await react(oom.root, users[day % 3]!, 'eyes');
        await say(oom.root, users[day % 3]!, 'ack');
        if (day % 3 === 0) await react(oom.root, users[(day + 1) % 3]!, '+1');
        if (day === 4) await react(oom.root, users[2]!, '-1');
        if (day === 6) await say(oom.root, users[0]!, 'note: the heap was raised in the last deploy, watch the limit');
      }
      if (day !== 9) {
        clock.advance((10 + 3 * (day % 7)) * MIN);
        await loop.bot.handle(incidentIntents([crashLoop(pod, 'payments', fp, 'resolved')]));
        await settle();
      }
      // A crash loop elsewhere: the runbook (a Playbook), nothing that claims to resolve it.
      if (day % 2 === 0) {
        at(5);
        const rb = await fire(crashLoop(`indexer-5c7d9-${String(day).padStart(5, 'b')}`, 'search', `rb-${day}`));
        if (rb.openId) opens.runbook.push(rb.openId);
        if (rb.root && day % 4 === 0) await react(rb.root, users[1]!, '+1');
        clock.advance(45 * MIN);
        await loop.bot.handle(incidentIntents([crashLoop(`indexer-5c7d9-${String(day).padStart(5, 'b')}`, 'search', `rb-${day}`, 'resolved')]));
        await settle();
      }
      // Something the catalog does not know: the model investigates; the curator files the first as a KB PR.
      if (day % 3 === 1) {
        at(11);
        const inv = await fire(
          alert({
            alertname: 'LedgerDbPoolExhausted',
            fingerprint: `inv-${day}`,
            labels: { namespace: 'ledger', service: 'ledger-db', severity: 'critical', cluster: 'prod-eu-1' },
            annotations: { summary: 'ledger-db connection pool exhausted', description: 'All 50 connections of the ledger-db pool are in use.' },
          }),
        );
        if (inv.openId) opens.investigated.push(inv.openId);
        if (inv.root) {
          clock.advance(7 * MIN);
          await say(inv.root, users[1]!, 'ack');
          if (day === 10) await say(inv.root, users[1]!, 'fixed: raised the pool to 80 and restarted ledger-db');
        }
        clock.advance(30 * MIN);
        await loop.bot.handle(
          incidentIntents([
            alert({
              alertname: 'LedgerDbPoolExhausted',
              fingerprint: `inv-${day}`,
              status: 'resolved',
              labels: { namespace: 'ledger', service: 'ledger-db', severity: 'critical', cluster: 'prod-eu-1' },
            }),
          ]),
        );
        await settle();
      }
      // The model is down: a degraded answer.
      if (day % 7 === 3) {
        at(15);
        const dg = await fire(
          alert({
            alertname: 'DegradedQueueBacklog',
            fingerprint: `dg-${day}`,
            labels: { namespace: 'jobs', service: 'queue-worker', severity: 'warning' },
            annotations: { summary: 'queue backlog growing' },
          }),
        );
        if (dg.openId) opens.degraded.push(dg.openId);
      }
      // A noisy alert someone silences (🔕, 4 h); its next firing an hour later is dropped while the silence holds.
      if (day === 12 || day === 15) {
        at(18);
        const noisy = (n: number) =>
          alert({
            alertname: 'CPUThrottlingHigh',
            fingerprint: `cpu-${day}-${n}`,
            labels: { namespace: 'logging', pod: `fluent-bit-x7k2${n}`, container: 'fluent-bit', severity: 'info' },
            annotations: { summary: 'fluent-bit is CPU throttled' },
          });
        const first = await fire(noisy(1));
        if (first.root) await react(first.root, users[day === 12 ? 0 : 1]!, 'no_bell');
        clock.advance(HOUR);
        await fire(noisy(2));
      }
      // The hostile alert (twice: a recurrence).
      if (day === 8 || day === 17) {
        at(20);
        const h = await fire(
          alert({
            alertname: HOSTILE.alertname,
            fingerprint: `hostile-${day}`,
            labels: { namespace: 'payments', service: 'webhook-relay', severity: 'critical' },
            annotations: { summary: HOSTILE.summary, description: HOSTILE.description, runbook_url: HOSTILE.runbookUrl },
          }),
        );
        if (h.openId) opens.hostile.push(h.openId);
        if (h.root) await say(h.root, users[2]!, `note: ${HOSTILE.summary}`);
      }
    }
    await settle();
    // A human closes the newest KB PR unmerged; the oldest stays open.
    const pulls = fake.pulls();
    if (pulls.length > 1) fake.closeItem(pulls.at(-1)!.number);
    const prs = pulls.map((p) => `https://github.example/acme/kb/pull/${p.number}`);
    await stopLoop();
    if (errors.length > 0) throw new Error(`the seed logged errors: ${JSON.stringify(errors.slice(0, 3))}`);
    const events = appended.length;
    // The served catalog: main of the remote as it stands.
    await simpleGit().cwd(served).pull();
    catalog = (await loadSnapshot(served)).snapshot;
    rmSync(catalogDir, { recursive: true, force: true });
    cpSync(served, catalogDir, { recursive: true, filter: (src) => !src.includes(`${join(served, '.git')}`) });
    writeFileSync(join(root, 'seed.json'), JSON.stringify({ opens, prs }, null, 2));
    return { dataDir, catalogDir, from: new Date(startMs), to: clock.now(), opens, prs, events };
  } finally {
    await ledger.close();
    await store.close();
    await fake.close();
    await remote.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  }
}
