/**
 * Issue 6 "Done when", first bullet, through ONE real `reprise serve` process: the model fake
 * and the k8s MCP fake investigate an alert no entry covers; the verified Finding becomes a
 * `KB: …` pull request on the GitHub REST fake (real Octokit) whose branch — with the entry
 * file — is on a bare git remote that is also the served catalog (`catalog.git.url`); a second
 * investigation of the same trigger comments on that PR; a human merges it on the remote;
 * `reprise catalog sync` (the real CLI, through the control socket) prints the new HEAD; the
 * next firing of the trigger is answered from the new entry (rerank → confirm → verify, as the
 * product does with a model configured). No grooming write happens along the way.
 */
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { simpleGit } from 'simple-git';
import { createBareCatalogRepo, type BareCatalogRepo } from '../fakes/bare-catalog-repo.js';
import type { FakeReply, RecordedRequest } from '../fakes/openai-fake.js';
import { startGitHubFake, type GitHubFake } from '../fakes/github-fake.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { eventsOf, ledgerEvents, ofType, type LedgerRow } from './helpers/chat-e2e.js';
import { byRole, fake, finding, roleOf, toolCall, serveModelConfig, useModelAndTools, verdict, type Role } from './helpers/investigation.js';
import { cleanup, makeTmpDir, REPO_ROOT, runCli, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

useModelAndTools();

const TRIGGER = 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1';
/** A small starter catalog without anything about checkout-api (BM25 still needs a corpus). */
const SEED = [
  'kubernetes/KubePodCrashLooping.md',
  'kubernetes/KubeContainerWaiting.md',
  'incidents/coredns-loop-plugin-crashloop.md',
  'incidents/redis-evictions-sessions-lost.md',
  'incidents/auth-service-rollout-readiness-path.md',
  'incidents/fluent-bit-cpu-throttling.md',
  'concepts/alert-severity-policy.md',
];

let github: GitHubFake | undefined;
let remote: BareCatalogRepo | undefined;
afterEach(async () => {
  await cleanup();
  await github?.close();
  await remote?.cleanup();
  github = undefined;
  remote = undefined;
});

const post = (bot: BotProcess, payload: unknown) => postAlert(bot.url, payload, { authorization: 'Bearer test-token-for-investigations' });
/** Critical: a miss is investigated at once, without `investigate_after`. */
const firing = (pod: string) => crashLoopPayload({ status: 'firing', severity: 'critical', pod, startsAt: `2026-11-29T0${pods.indexOf(pod)}:00:00Z` });
const resolved = (pod: string) => crashLoopPayload({ status: 'resolved', severity: 'critical', pod, startsAt: `2026-11-29T0${pods.indexOf(pod)}:00:00Z` });
const pods = ['checkout-api-7d9f8c6b5-aaaa1', 'checkout-api-7d9f8c6b5-bbbb2', 'checkout-api-7d9f8c6b5-cccc3'];

const headOf = async (bare: string): Promise<string> => (await simpleGit(bare).revparse(['main'])).trim();

describe('curation end to end through reprise serve', () => {
  it(
    'a verified Finding opens a KB PR, a re-investigation comments on it, the merged entry syncs and the next firing recalls it',
    { timeout: 90_000 },
    async () => {
      const seed: Record<string, string> = {};
      for (const p of SEED) seed[p] = await readFile(join(REPO_ROOT, 'catalog', p), 'utf8');
      remote = await createBareCatalogRepo(seed);
      const bare = remote;
      github = await startGitHubFake({ branchExists: async (b) => (await bare.branches()).includes(b) });
      const seedHead = await headOf(remote.url);

      // The model's work, per role, consumed in order; the recall's rerank is added once the entry exists.
      const script: Partial<Record<Role, Array<FakeReply | ((req: RecordedRequest) => FakeReply)>>> = {
        investigate: [toolCall('k8s__pod_status', { namespace: 'payments' }), finding()],
        verify: [verdict('supported', 0.9)],
      };
      fake.respond(byRole(script));

      const dir = makeTmpDir();
      const config = join(dir, 'reprise.yaml');
      writeFileSync(
        config,
        serveModelConfig({
          catalog: ['  git:', `    url: ${JSON.stringify(remote.url)}`, '    poll_interval: 1h'],
          trigger: ['  investigate_after: 10m'],
          after: ['forge:', '  repo: acme/kb', '  token: test-token', `  api_url: ${github.url}`],
        }),
      );
      const env = { REPRISE_DATA_DIR: dir };
      const bot = await spawnBot({ dataDir: dir, args: ['--config', config] });
      await waitFor(async () => ((await fetch(`${bot.url}/readyz`)).status === 200 ? true : undefined), 'the first catalog index');

      // 1. A firing no entry covers → investigated → a verified Finding → a new KB PR.
      expect((await post(bot, firing(pods[0]!))).status).toBe(202);
      const [novel] = await eventsOf(dir, 'curated', 1);
      expect(novel).toMatchObject({ subject: 'finding', decision: 'novel', triggerKey: TRIGGER });
      expect(fake.requests.map(roleOf)).toEqual(['investigate', 'investigate', 'verify']);
      const fresh = ofType(await ledgerEvents(dir), 'finding')[0];
      expect(fresh).toMatchObject({ kind: 'fresh', status: 'completed', verdict: 'action_required' });
      expect(github.pulls()).toHaveLength(1);
      const pr = github.pulls()[0]!;
      expect(novel).toMatchObject({ number: pr.number, url: expect.stringContaining(`/pull/${pr.number}`) });
      expect(pr.title).toMatch(/^KB: KubePodCrashLooping on .*checkout-api/);
      expect(pr.labels).toEqual(['reprise', 'kb-draft']);
      expect(pr.body).toMatch(/<!-- reprise:dup=[0-9a-f]{64} -->/);
      expect(pr.body).toContain('### Related knowledge');
      expect(pr.body).toContain('rollout undo deploy/checkout-api');
      // The branch is on the bare remote with exactly one new file, `incidents/<slug>-<fp8>.md`.
      expect(await remote.branches()).toContain(pr.head);
      const name = pr.head.slice('reprise/kb/'.length);
      expect(name).toMatch(/^[a-z0-9-]+-[0-9a-f]{8}$/);
      const entryId = `incidents/${name}.md`;
      const diff = (await simpleGit(remote.url).raw(['diff', '--name-status', `main...${pr.head}`])).trim();
      expect(diff).toBe(`A\t${entryId}`);
      const file = (await remote.show(pr.head, entryId))!;
      expect(file).toMatch(/^---\ntype: Incident\n/);
      expect(file).toContain('alerts:\n  - KubePodCrashLooping');
      expect(file).toContain('JAVA_TOOL_OPTIONS=-Xmx960m');
      expect(file).not.toContain('last_validated');
      for (const s of ['## Symptom', '## Cause', '## Resolution']) expect(file).toContain(s);
      // The thread's card is told, with the link, and keeps the finding it showed.
      const thread1 = bot.transcriptLines().find((l) => l.kind === 'rca')!.threadId;
      const told = await bot.waitForTranscript((ls) => ls.some((l) => l.threadId === thread1 && l.text.includes('KB: draft opened for review')));
      const kbCard = told.filter((l) => l.threadId === thread1 && l.kind === 'update').at(-1)!.text;
      expect(kbCard).toContain(`KB: draft opened for review PR #${pr.number} <https://github.example/acme/kb/pull/${pr.number}>`);
      expect(kbCard).toContain('🔥 action required · 🧭 checkout-api is OOMKilled');
      expect(kbCard).toMatch(/🧭 checkout-api is OOMKilled.* · 🟢 0\.\d\d/);

      // 2. Resolved, fires again: investigated again (the model words it differently) → a comment on that PR.
      script.investigate!.push(finding({ summary: 'the JVM heap again exceeds the checkout-api container limit', confidence: 0.9 }));
      script.verify!.push(verdict('supported', 0.9));
      expect((await post(bot, resolved(pods[0]!))).status).toBe(202);
      // The resolved card still shows the finding and its KB line.
      const closed = await bot.waitForTranscript((ls) => ls.some((l) => l.threadId === thread1 && l.kind === 'update' && l.text.includes('✅ resolved')));
      const resolvedCard = closed.filter((l) => l.threadId === thread1 && l.kind === 'update').at(-1)!.text;
      expect(resolvedCard).toContain('🧭 checkout-api is OOMKilled');
      expect(resolvedCard).toContain('KB: draft opened for review');
      expect((await post(bot, firing(pods[1]!))).status).toBe(202);
      const curated2 = await eventsOf(dir, 'curated', 2);
      expect(curated2[1]).toMatchObject({ decision: 'duplicate_pr', number: pr.number, triggerKey: TRIGGER });
      expect(curated2[1]!['openId']).not.toBe(novel!['openId']);
      expect(github.pulls()).toHaveLength(1);
      const comments = github.commentsOn(pr.number);
      expect(comments).toHaveLength(1);
      expect(comments[0]!.body).toMatch(/^<!-- reprise:seen=/);
      expect(comments[0]!.body).toContain('the JVM heap again exceeds the checkout-api container limit');
      await bot.waitForTranscript((ls) => ls.some((l) => l.text.includes('KB: same finding as a draft under review; added there')));

      // 3. A human merges the PR: the branch lands on the remote's main, the forge says merged.
      await remote.merge(pr.head);
      github.merge(pr.number);
      const merged = await headOf(remote.url);
      expect(merged).not.toBe(seedHead);
      expect(await remote.show('main', entryId)).toBe(file);
      expect((await post(bot, resolved(pods[1]!))).status).toBe(202);

      // 4. `reprise catalog sync` asks the running bot to fetch now, and prints the new HEAD.
      const synced = await runCli(['catalog', 'sync', '--config', config], { env });
      expect(synced.code, synced.stderr).toBe(0);
      expect(synced.stdout).toContain(`catalog synced: HEAD ${merged} (was ${seedHead})`);
      expect(synced.stdout).toMatch(/1 entry changed/);

      // 5. The next firing is answered from the new entry: rerank picks it, confirm + verify hold.
      script.rerank = [{ content: JSON.stringify({ entry: entryId, confidence: 0.9, reason: 'same workload, same failure' }) }];
      script.verify!.push(verdict('supported', 0.95));
      const before = fake.requests.length;
      const res = await post(bot, firing(pods[2]!));
      expect(res.status, res.text).toBe(202);
      const findings = await eventsOf(dir, 'finding', 3);
      expect(fake.requests.slice(before).map(roleOf)).toEqual(['rerank', 'verify']);
      // The rerank saw the new entry among its candidates.
      expect(JSON.stringify(fake.requests[before]!.body.messages)).toContain(entryId);
      const rows = await ledgerEvents(dir);
      const lastOpen = ofType(rows, 'open').at(-1)! as LedgerRow;
      // With a model the match gate is the model's: the open is recorded at once (with the runbook
      // shown meanwhile); the verified recall is recorded with it and promotes it to a recall of the entry.
      expect(lastOpen).toMatchObject({ kind: 'fresh', entry: 'kubernetes/KubePodCrashLooping.md', answerKind: 'runbook', triggerKey: TRIGGER });
      expect(findings[2]).toMatchObject({ kind: 'recall', status: 'completed', entry: entryId, openId: lastOpen['id'], calls: 2 });
      const curated3 = await eventsOf(dir, 'curated', 3);
      expect(curated3[2]).toMatchObject({ decision: 'recalled', detail: `answered from ${entryId}`, openId: lastOpen['id'] });
      const lines = await bot.waitForTranscript((ls) =>
        ls.some((l) => l.kind === 'detail' && l.text.includes(`Answered from your knowledge base: ${entryId}`)),
      );
      const thread3 = lines.filter((l) => l.kind === 'rca').at(-1)!.threadId;
      const recallCard = lines.filter((l) => l.threadId === thread3 && l.kind === 'update').at(-1)!.text;
      expect(recallCard).toContain('⚡ Instant recall: KubePodCrashLooping on payments/checkout-api');
      expect(recallCard).toContain(`KB: answered from the catalog (answered from ${entryId}); nothing to draft`);
      // The entry's resolution (a list, as drafted) comes back as its action, not as list text.
      const recallDetail = lines.filter((l) => l.threadId === thread3 && l.kind === 'detail').at(-1)!.text;
      expect(recallDetail).toContain('→ kubectl -n payments rollout undo deploy/checkout-api');

      // No grooming sweep ran, and the forge saw exactly: 1 PR (+ its labels) and 1 comment.
      const writes = github.writes().map((w) => `${w.method} ${w.path}`);
      expect(writes).toEqual([
        'POST /repos/acme/kb/pulls',
        `POST /repos/acme/kb/issues/${pr.number}/labels`,
        `POST /repos/acme/kb/issues/${pr.number}/comments`,
      ]);
      expect(bot.logs().some((l) => typeof l.msg === 'string' && /grooming sweep/.test(l.msg) && !/scheduled/.test(l.msg))).toBe(false);
      // A dry-run `reprise curate` through the running bot plans but writes nothing.
      const dry = await runCli(['curate', '--json', '--config', config], { env });
      expect(dry.code, dry.stderr).toBe(0);
      expect(github.writes()).toHaveLength(3);

      expect(await bot.stop()).toEqual({ code: 0, signal: null });
    },
  );
});
