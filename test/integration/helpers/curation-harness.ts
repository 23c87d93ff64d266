/**
 * The bot with curation on, in-process: a memory ledger, a recording chat surface and the real
 * outbox; investigations from a scripted engine (the model's part is not under test here);
 * the real GitHub adapter (Octokit) against the REST fake and the real git drafts module
 * against a bare repository on disk.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleGit } from 'simple-git';
import { GitDrafts } from '../../../src/adapters/git/git-drafts.js';
import { GitHubForge } from '../../../src/adapters/github/github-forge.js';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { loadSnapshot } from '../../../src/runtime/open-catalog.js';
import { InvestigationJobs, type InvestigationEngine } from '../../../src/core/bot/investigation-jobs.js';
import { Routing } from '../../../src/core/bot/routing.js';
import type { QuestionModel, QuestionOptions } from '../../../src/core/bot/bot-context.js';
import { CurationWorker, type CurationOptions } from '../../../src/core/curate/curation-worker.js';
import type { Finding, ModelFinding } from '../../../src/core/investigate/finding.js';
import { emptyTally } from '../../../src/core/investigate/model-call.js';
import type { InvestigationResult } from '../../../src/core/investigate/investigation-types.js';
import { eventKey, Ledger } from '../../../src/core/ledger/ledger.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { buildLoop } from '../../../src/runtime/build-loop.js';
import type { RepriseBot } from '../../../src/core/bot/reprise-bot.js';
import type { OutboxWorker } from '../../../src/core/outbox/outbox-worker.js';
import type { CatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import { ManualClock } from '../../../src/ports/clock.js';
import type { Logger } from '../../../src/ports/logger.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { createBareCatalogRepo, type BareCatalogRepo } from '../../fakes/bare-catalog-repo.js';
import { startGitHubFake, type GitHubFake, type GitHubFakeOptions } from '../../fakes/github-fake.js';
import { recallOpts } from '../../unit/recall/recall-fixtures.js';
import { RecordingTransport } from '../../unit/bot/recording-transport.js';

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  obj: unknown;
  msg: string | undefined;
}

function recordingLogger(lines: LogLine[]): Logger {
  const l: Logger = {
    debug() {},
    info: (obj, msg) => void lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => void lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => void lines.push({ level: 'error', obj, msg }),
    child: () => l,
  };
  return l;
}

/** A verified, confident finding with evidence and a fixing action: above the bar. */
export function goodFinding(over: Partial<ModelFinding & { verified: boolean }> = {}): Finding {
  return {
    summary: 'checkout-api is OOMKilled: the -Xmx960m heap leaves no room inside the 1Gi limit',
    verdict: 'action_required',
    confidence: 0.86,
    rootCauses: [
      {
        cause: 'JAVA_TOOL_OPTIONS=-Xmx960m inside a 1Gi memory limit',
        confidence: 0.86,
        evidence: ['lastState.terminated.reason OOMKilled, exit 137'],
        entities: ['checkout-api'],
      },
    ],
    suggestedActions: [{ action: 'lower -Xmx to 700m or raise the limit to 1.5Gi', reversible: true }],
    ruledOut: [],
    openQuestions: [],
    dataGaps: [],
    changeRef: 'deploy 4f2a1c (JAVA_TOOL_OPTIONS change)',
    investigator: { model: 'main-model', promptHash: 'abc123def456', allowlist: [] },
    partial: false,
    verified: true,
    ...over,
  };
}

export function resultOf(finding: Finding): InvestigationResult {
  return {
    id: 'inv',
    status: 'completed',
    detail: 'completed',
    kind: 'fresh',
    finding,
    trace: [],
    usage: { calls: 2, input: 100, output: 20, costUsd: 0, unpricedCalls: 2 },
    steps: [],
    version: finding.investigator,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:00:01.000Z',
    queuedMs: 0,
  };
}

export interface CurationHarness {
  fake: GitHubFake;
  remote: BareCatalogRepo;
  ledger: Ledger;
  store: KeyValueStore;
  clock: ManualClock;
  transport: RecordingTransport;
  bot: RepriseBot;
  worker: CurationWorker;
  jobs: Pick<InvestigationJobs, 'idle' | 'stop'>;
  outbox: OutboxWorker;
  logs: LogLine[];
  /** Findings the next investigations return, in order. */
  findings: Finding[];
  /** The served catalog (swap it to simulate a sync). */
  setCatalog(s: CatalogSnapshot): void;
  /** Reloads the served catalog from the remote's main branch (what catalog sync does). */
  syncCatalog(): Promise<CatalogSnapshot>;
  events(): Promise<LedgerEvent[]>;
  pending(): number;
  settle(): Promise<void>;
  close(): Promise<void>;
}

export async function curationHarness(
  o: {
    seed?: Record<string, string>;
    fake?: GitHubFakeOptions;
    worker?: Partial<CurationOptions>;
    store?: KeyValueStore;
    remote?: BareCatalogRepo;
    /** No model at all: recall decides with the margin gate (issue 21: memory that grows without one). */
    noModel?: boolean;
    /** A model that answers thread questions (with `noModel`: that model only, no investigations). */
    questionModel?: QuestionModel;
    questions?: QuestionOptions;
  } = {},
): Promise<CurationHarness> {
  const remote = o.remote ?? (await createBareCatalogRepo(o.seed ?? { 'README.md': '# catalog\n' }));
  const tmp = await mkdtemp(join(tmpdir(), 'reprise-curation-'));
  const logs: LogLine[] = [];
  const logger = recordingLogger(logs);
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const drafts = new GitDrafts({ remoteUrl: remote.url, workDir: join(tmp, 'work'), logger });
  const fake = await startGitHubFake({ branchExists: (b) => drafts.branchExists(b), now: () => clock.now(), ...o.fake });
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
  let catalog: CatalogSnapshot | undefined;
  const syncCatalog = async (): Promise<CatalogSnapshot> => {
    const dir = join(tmp, `served-${Date.now()}-${Math.random().toString(16).slice(2)}`);
    await simpleGit().clone(remote.url, dir, ['--branch', 'main']);
    const { snapshot } = await loadSnapshot(dir);
    catalog = snapshot;
    return snapshot;
  };
  await syncCatalog();
  const store = o.store ?? createStore('memory://', '');
  const ledger = await Ledger.open(store);
  const transport = new RecordingTransport({});
  const transports = new Map([[transport.name, transport]]);
  const findings: Finding[] = [];
  const engine: InvestigationEngine = {
    run: async (req) => {
      if (req.recall) {
        // A recall the model confirmed and verified: the entry's answer is the result.
        const f = findings.shift() ?? goodFinding({ summary: `recalled from ${req.recall.entry.id}` });
        return {
          ...resultOf(f),
          kind: 'recall',
          recall: { entry: req.recall.entry.id, confidence: req.recall.confidence, confirmed: true, verify: null, delivered: true },
        };
      }
      const f = findings.shift();
      if (!f) throw new Error('no scripted finding left');
      return resultOf(f);
    },
    // The match gate with a model: the top structurally agreeing candidate, confidently.
    rerank: async (_incident, candidates) => ({
      hit: true,
      entry: candidates[0]!.entry,
      confidence: 0.9,
      reason: 'scripted',
      trace: [],
      usage: emptyTally(),
      steps: [],
    }),
  };
  const {
    bot,
    outbox,
    jobs: scheduler,
    curation,
  } = buildLoop({
    ledger,
    catalog: () => catalog!,
    clock,
    logger,
    recall: recallOpts(),
    routing: new Routing({ transports: [{ name: transport.name, defaultChannel: '#rec', param: 'channel' }], rules: [], mentions: [] }),
    transports,
    outbox: { baseDelayMs: 1000, maxDelayMs: 60_000 },
    ...(o.questions ? { questions: o.questions } : {}),
    ...(o.noModel
      ? o.questionModel
        ? { model: { questionModel: o.questionModel } }
        : {}
      : {
          model: {
            jobs: (handle) => new InvestigationJobs({ engine, ledger, clock, logger, options: { investigateAfterMs: 0, outcomeFloor: 0.5 }, handle }),
            ...(o.questionModel ? { questionModel: o.questionModel } : {}),
          },
        }),
    curation: {
      minConfidence: 0.75,
      worker: (handle) =>
        new CurationWorker({ ledger, forge, drafts, catalog: () => catalog!, clock, logger, handle, options: { baseDelayMs: 60_000, ...o.worker } }),
    },
  });
  const worker = curation!;
  const jobs = scheduler ?? { idle: async () => {}, stop: async () => {} };
  await transport.start(async (intent) => void (await bot.handle(intent)));
  outbox.start();
  worker.start();
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 3; i++) {
      await bot.idle();
      await jobs.idle();
      await worker.idle();
      outbox.kick();
      await outbox.idle();
    }
  };
  return {
    fake,
    remote,
    ledger,
    store,
    clock,
    transport,
    bot,
    worker,
    jobs,
    outbox,
    logs,
    findings,
    setCatalog: (s) => void (catalog = s),
    syncCatalog,
    events: async () => {
      const out: LedgerEvent[] = [];
      for (let s = 1; s <= ledger.seq; s++) out.push((await store.get<LedgerEvent>(eventKey(s)))!);
      return out;
    },
    pending: () => ledger.read.pendingCurate().length,
    settle,
    close: async () => {
      await jobs.stop();
      await worker.stop();
      await outbox.stop();
      await fake.close();
      if (!o.remote) await remote.cleanup();
      await rm(tmp, { recursive: true, force: true });
    },
  };
}
