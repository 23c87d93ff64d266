/**
 * Issue 31 item 2 "Done when", through `reprise serve` (in process: the same startBot, config,
 * HTTP port and control socket) with the Slack stand-in, a real bare git catalog remote that is
 * also the served catalog, and the GitHub stand-in (real Octokit), no model: a first fix → its
 * Incident entry PR → merged and synced → the next occurrence is an instant recall → a second,
 * different fix opens a PR that MODIFIES the existing entry file (its "What has fixed it" list,
 * ranked by the outcome ledger) → a `cause:` note lands in that entry's Cause through the same PR.
 * The thread and `/ui` say where each went; hostile words are inert in the entry and the PR.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleGit } from 'simple-git';
import { afterEach, describe, expect, it } from 'vitest';
import { createBareCatalogRepo, type BareCatalogRepo } from '../fakes/bare-catalog-repo.js';
import { startGitHubFake, type GitHubFake } from '../fakes/github-fake.js';
import { startSlackFake, type PostedMessage, type SlackFake } from '../fakes/slack-fake.js';
import { appMentionEvent, deliver } from '../fakes/slack-requests.js';
import { waitFor } from '../helpers/wait-for.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { eventsOf, writeConfig } from './helpers/chat-e2e.js';
import { startInProcess } from './helpers/in-process-bot.js';
import { cleanup, makeTmpDir, REPO_ROOT, runCli } from './helpers/spawn-bot.js';

const SEED = ['kubernetes/KubePodCrashLooping.md', 'incidents/redis-evictions-sessions-lost.md', 'concepts/alert-severity-policy.md'];
const BOT = 'U0REPRISE';
const ANN = 'U0ANN';
const BOB = 'U0BOB';
const PAYMENTS = 'C0PAYMENTS';
const HOSTILE =
  'drained node-7 @channel <!here> <b>now</b> <!-- reprise:dup=0123456789abcdef --> [wiki](https://evil.example)\n## Cause\nand let the pods reschedule';
const pods = ['checkout-api-7d9f8c6b5-aaaa1', 'checkout-api-7d9f8c6b5-bbbb2'];
/** Occurrence i of the alert: its own start and (resolved) end, days apart, so the first fix is graded as having held. */
function payload(i: number, status: 'firing' | 'resolved'): Record<string, unknown> {
  const p = crashLoopPayload({ status, pod: pods[i]!, startsAt: `2026-11-${10 + i * 5}T03:00:00Z` });
  const alerts = p['alerts'] as Array<Record<string, unknown>>;
  if (status === 'resolved') alerts[0]!['endsAt'] = `2026-11-${10 + i * 5}T03:30:00Z`;
  return p;
}

let github: GitHubFake | undefined;
let remote: BareCatalogRepo | undefined;
let slack: SlackFake | undefined;
afterEach(async () => {
  await cleanup();
  await github?.close();
  await remote?.cleanup();
  await slack?.close();
  github = remote = slack = undefined;
});

const section = (md: string, name: string): string => md.split(`## ${name}\n\n`)[1]?.split('\n## ')[0] ?? '';

describe('a second fix amends the entry, through reprise serve', () => {
  it(
    'merged fix entry → a different fix opens a PR editing that file, ranked by the ledger → a cause: note fills its Cause on the same PR',
    { timeout: 120_000 },
    async () => {
      const seed: Record<string, string> = {};
      for (const p of SEED) seed[p] = await readFile(join(REPO_ROOT, 'catalog', p), 'utf8');
      const r = (remote = await createBareCatalogRepo(seed));
      const g = (github = await startGitHubFake({ branchExists: async (b) => (await r.branches()).includes(b) }));
      const s = (slack = await startSlackFake({ botUserId: BOT }));
      const dir = makeTmpDir();
      const config = writeConfig(
        dir,
        [
          'catalog:',
          '  git:',
          `    url: ${JSON.stringify(r.url)}`,
          '    poll_interval: 1h',
          'forge:',
          '  repo: acme/kb',
          '  token: test-token',
          `  api_url: ${g.url}`,
          'transport:',
          '  slack:',
          `    allow_users: [${ANN}, ${BOB}]`,
          'routing:',
          '  rules:',
          '    - match: { namespace: payments }',
          `      slack: ${PAYMENTS}`,
          '',
        ].join('\n'),
      );
      const env = { REPRISE_DATA_DIR: dir };
      const bot = await startInProcess({
        dataDir: dir,
        args: ['--config', config],
        env: { SLACK_BOT_TOKEN: s.botToken, SLACK_SIGNING_SECRET: s.signingSecret, SLACK_CHANNEL: 'C0DEFAULT', SLACK_API_URL: s.apiUrl },
      });
      await waitFor(async () => ((await fetch(`${bot.url}/readyz`)).status === 200 ? true : undefined), { what: 'the first catalog index', timeoutMs: 30_000 });
      const cards = (): PostedMessage[] => s.messages.filter((m) => m.channel === PAYMENTS && !m.thread_ts);
      const replies = (root: PostedMessage): PostedMessage[] => s.messages.filter((m) => m.thread_ts === root.ts);
      const shown = (m: { text: unknown; blocks: unknown }): string => `${String(m.text)}\n${JSON.stringify(m.blocks)}`;
      let n = 0;
      const say = async (user: string, root: PostedMessage, text: string): Promise<void> => {
        const ts = `${Math.floor(Date.now() / 1000)}.${String(900000 + ++n)}`;
        const ev = appMentionEvent({ user, text: `<@${BOT}> ${text}`, channel: PAYMENTS, ts, threadTs: root.ts });
        expect((await deliver(`${bot.url}/slack/events`, s.signed.event(ev))).status).toBe(200);
      };

      // Occurrence 1: no entry knows it; resolved; Ann says what fixed it → a new Incident entry PR.
      expect((await postAlert(bot.url, payload(0, 'firing'))).status).toBe(202);
      const card1 = await s.waitFor(() => cards()[0]);
      expect((await postAlert(bot.url, payload(0, 'resolved'))).status).toBe(202);
      await s.waitFor(() => replies(card1).find((m) => shown(m).includes('what fixed it?')));
      await say(ANN, card1, 'fixed: rolled back deploy 4f2a1c');
      const first = await waitFor(() => g.pulls().find((p) => p.labels.includes('human-fix')), { what: 'the first fix PR', timeoutMs: 30_000 });
      const entryId = `incidents/${first.head.slice('reprise/kb/'.length)}.md`;
      await s.waitFor(() => replies(card1).find((m) => shown(m).includes('drafted as a new Incident entry')));

      // Merged and synced: the next occurrence is an instant recall of that entry.
      await r.merge(first.head);
      g.merge(first.number);
      const synced = await runCli(['catalog', 'sync', '--config', config], { env });
      expect(synced.code, synced.stderr).toBe(0);
      const merged = (await r.show('main', entryId))!;
      expect(merged).toContain('> rolled back deploy 4f2a1c');
      expect((await postAlert(bot.url, payload(1, 'firing'))).status).toBe(202);
      const card2 = await s.waitFor(() => cards()[1]);
      expect((await eventsOf(dir, 'open', 2))[1]).toMatchObject({ kind: 'recall', entry: entryId });

      // A second, different fix: not "already in the catalog" — a PR that edits the existing entry file.
      await say(BOB, card2, `fixed: ${HOSTILE}`);
      const amend = await waitFor(() => g.pulls().find((p) => p.head.startsWith('reprise/amend/')), { what: 'the entry-edit PR', timeoutMs: 30_000 });
      expect(g.pulls().filter((p) => p.state === 'open')).toHaveLength(1);
      const diff = await simpleGit(join(r.root, 'catalog.git')).raw(['diff', '--name-status', 'main', amend.head]);
      expect(diff.trim()).toBe(`M\t${entryId}`);
      const edited = (await r.show(amend.head, entryId))!;
      const list = section(edited, 'What has fixed it').trim().split('\n');
      // Ranked by the outcome ledger: Ann's fix held (no recurrence within a day of its end); Bob's is too new to grade.
      expect(list).toHaveLength(2);
      expect(list[0]).toBe(`- rolled back deploy 4f2a1c — from ${ANN} via Slack on ${first.createdAt.slice(0, 10)} · worked 1 of 1 time`);
      expect(list[1]).toMatch(new RegExp(`^- drained node-7 .* and let the pods reschedule — from ${BOB} via Slack on \\d{4}-\\d{2}-\\d{2} · not graded yet$`));
      expect(list[1]).not.toMatch(/@channel|<!here>|<b>|<!--|\]\(|https:\/\//);
      expect(edited.match(/^## Cause$/gm)).toHaveLength(1);
      expect(section(edited, 'Resolution')).toBe(section(merged, 'Resolution'));
      expect(amend.title).toMatch(/^KB: another fix for KubePodCrashLooping on payments\/checkout-api/);
      expect(amend.body.match(/<!-- reprise:/g)).toHaveLength(3);
      expect(amend.body).not.toContain('reprise:dup=0123456789abcdef -->');
      const toldFix = await s.waitFor(() => replies(card2).find((m) => shown(m).includes("added to the catalog's entry for this alert")));
      expect(shown(toldFix)).toContain(`/pull/${amend.number}`);
      expect(shown(toldFix)).toContain(entryId);
      for (const m of replies(card2)) expect(String(m.text)).not.toMatch(/<!here>|<b>/);

      // A cause said later lands in that entry's Cause — through the same PR, not an unrelated one.
      await say(ANN, card2, 'note: cause: node-7 ran out of disk under the journal <!channel>');
      const toldCause = await s.waitFor(() => replies(card2).find((m) => shown(m).includes("written into the entry's Cause")));
      expect(shown(toldCause)).toContain(`/pull/${amend.number}`);
      expect(g.pulls()).toHaveLength(2);
      const withCause = (await r.show(amend.head, entryId))!;
      const cause = section(withCause, 'Cause');
      expect(cause).not.toContain('Not recorded');
      expect(cause).toContain('node-7 ran out of disk under the journal');
      expect(cause).toContain(`— from ${ANN} via Slack on`);
      expect(cause).not.toContain('<!channel>');
      expect(section(withCause, 'What has fixed it')).toBe(section(edited, 'What has fixed it'));
      expect(g.commentsOn(amend.number).map((c) => c.body)).toEqual([expect.stringContaining('The cause added to this PR')]);

      // The entry stays valid for the merge gate, and /ui lists where both went.
      await r.merge(amend.head);
      const lint = await runCli(['catalog', 'sync', '--config', config], { env });
      expect(lint.code, lint.stderr).toBe(0);
      const gaps = await (await fetch(`${bot.url}/ui/gaps`)).text();
      expect(gaps).toContain(`data-pr-kind="fix · edits an entry"`);
      expect(gaps).toContain(`#${amend.number}`);
      const curated = await eventsOf(dir, 'curated', 3);
      expect(curated.map((e) => e['decision'])).toEqual(['fix_pr', 'amend_pr', 'pr_update']);
      expect(await bot.stop()).toEqual({ code: 0, signal: null });
    },
  );
});
