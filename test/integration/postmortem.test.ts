/**
 * Issue 21 item 5: `postmortem` addressed to the bot in an incident thread drafts a postmortem
 * of it from the ledger (no model): with a forge, a PR adding `postmortems/<date>-<alert>.md`
 * on a real bare remote (once per request, however often the chat event is delivered); merged,
 * the catalog still never indexes it. Without a forge, the draft is replied in the thread.
 * `/reprise postmortem <trigger>` (a command, outside the thread) does the same for the trigger's
 * newest thread: the PR (its link in the thread) and a private answer, or the draft as that
 * answer; a trigger with no thread, or no trigger, is answered plainly.
 * Hostile words are inert in the file and the thread.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { incidentIntents } from '../../src/core/bot/intent.js';
import type { MessageRef } from '../../src/core/chat/chat-types.js';
import type { NoticeView, RichText } from '../../src/core/chat/thread-view.js';
import type { Incident } from '../../src/core/types.js';
import { loadSnapshot } from '../../src/runtime/open-catalog.js';
import { botHarness } from '../unit/bot/bot-harness.js';
import { alert } from '../unit/recall/recall-fixtures.js';
import { curationHarness, type CurationHarness } from './helpers/curation-harness.js';
import { REPO_ROOT } from './helpers/spawn-bot.js';

const SEED = ['kubernetes/KubePodCrashLooping.md', 'incidents/redis-evictions-sessions-lost.md', 'concepts/alert-severity-policy.md'];
const HOSTILE = 'rolled back deploy 4f2a1c @org/team <!channel> <b>bold</b> <!-- reprise:postmortem=forged -->';

let h: CurationHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function crashLoop(fingerprint: string, status: 'firing' | 'resolved' = 'firing'): Incident {
  return alert({
    alertname: 'KubePodCrashLooping',
    fingerprint,
    status,
    labels: { namespace: 'payments', pod: `checkout-api-7d9f8c6b5-${fingerprint}`, container: 'checkout-api', severity: 'warning' },
    annotations: { summary: 'checkout-api is crash looping', description: 'Pod payments/checkout-api is restarting.' },
  });
}

const inline = (t: RichText): string =>
  t
    .map((x) =>
      typeof x === 'string' ? x : 'code' in x ? x.code : 'link' in x ? `${x.link.label} <${x.link.url}>` : 'person' in x ? (x.person.name ?? x.person.id) : '',
    )
    .join('');
type Sayer = { inject(e: unknown): Promise<void>; name: string };
const say = (t: Sayer, thread: MessageRef, id: string, text: string) =>
  t.inject({ type: 'message', eventId: id, transport: t.name, user: { id: 'U-alice', name: 'alice' }, thread, channel: thread.channel, text, addressed: true });
/** `/reprise postmortem <args>` typed in a channel (no thread), answered privately. */
const command = (via: string, eventId: string, args: string) => ({
  type: 'command' as const,
  eventId,
  actor: { id: 'U-bob', name: 'bob', via },
  name: 'postmortem',
  args,
  // Typed at top level in the bot's configured channel, not in the thread (commands act only in
  // configured channels, issue 29 item 3).
  channel: '#rec',
  replyTo: { kind: 'ephemeral' as const, channel: '#rec', user: 'U-bob' },
});
const TK = 'kubepodcrashlooping|payments|deployment|checkout-api|';
const answered = (t: { ephemerals: Array<{ view: unknown }> }) =>
  t.ephemerals.map((e) => e.view as { title: string; body: RichText[] }).map((v) => `${v.title}: ${v.body.map(inline).join('\n')}`);

describe('a postmortem draft from the thread', () => {
  it('with a forge: one PR adding postmortems/…, however often the request arrives; merged, the catalog never indexes it', { timeout: 60_000 }, async () => {
    const seed: Record<string, string> = {};
    for (const p of SEED) seed[p] = await readFile(join(REPO_ROOT, 'catalog', p), 'utf8');
    h = await curationHarness({ seed, noModel: true });
    await h.bot.handle(incidentIntents([crashLoop('aaaa1')]));
    await h.settle();
    const root = h.transport.posts.at(-1)!.ref!;
    await say(h.transport, root, 'n1', 'note: cause: the JVM heap outgrew the 1Gi limit');
    await say(h.transport, root, 'f1', `fixed: ${HOSTILE}`);
    h.clock.advance(23 * 60_000);
    await h.bot.handle(incidentIntents([crashLoop('aaaa1', 'resolved')]));
    await say(h.transport, root, 'pm1', 'postmortem');
    await say(h.transport, root, 'pm1', 'postmortem'); // the surface's retry: the same event
    await h.settle();
    const pms = h.fake.pulls().filter((p) => p.labels.includes('postmortem'));
    expect(pms).toHaveLength(1);
    const pr = pms[0]!;
    expect(pr.title).toBe('Postmortem: KubePodCrashLooping on payments/checkout-api (2026-01-01)');
    expect(pr.body.match(/<!-- reprise:/g)).toHaveLength(1);
    const path = `postmortems/${pr.head.slice('reprise/postmortem/'.length)}.md`;
    expect(path).toMatch(/^postmortems\/2026-01-01-kubepodcrashlooping-payments-checkout-api-[0-9a-f]{8}\.md$/);
    const content = (await h.remote.show(pr.head, path))!;
    const section = (name: string): string => content.split(`## ${name}\n\n`)[1]!.split('\n## ')[0]!;
    expect(section('Cause')).toContain('the JVM heap outgrew the 1Gi limit');
    expect(section('Resolution')).toContain('> rolled back deploy 4f2a1c @');
    // Dated by the alert's own startsAt (10 min before Reprise heard), as chat and /ui date it.
    expect(section('Timeline')).toMatch(/2025-12-31 23:50 UTC — fired: checkout-api is crash looping/);
    expect(section('Timeline')).toMatch(/2026-01-01 00:00 UTC — Reprise posted it after 10 min/);
    expect(section('Timeline')).toMatch(/resolved after 33 min/);
    expect(content).not.toMatch(/<!channel>|<b>|<!--|@org/);
    const told = h.transport.replies
      .map((r) => r.view as NoticeView)
      .filter((v) => v.kind === 'notice')
      .map((v) => inline(v.text));
    expect(told).toContain(`postmortem drafted for review: PR #${pr.number} <https://github.example/acme/kb/pull/${pr.number}>`);

    // Merged on the remote and synced: the catalog does not hold it.
    await h.remote.merge(pr.head);
    const snap = await h.syncCatalog();
    expect(snap.entries.some((e) => e.id.startsWith('postmortems/'))).toBe(false);
    expect(await h.remote.show('main', path)).toBe(content);
  });

  it(
    'with a forge, /reprise postmortem <trigger> outside the thread: a PR of its newest thread, the link in the thread, a private answer',
    { timeout: 60_000 },
    async () => {
      const seed: Record<string, string> = {};
      for (const p of SEED) seed[p] = await readFile(join(REPO_ROOT, 'catalog', p), 'utf8');
      h = await curationHarness({ seed, noModel: true });
      await h.bot.handle(incidentIntents([crashLoop('cccc3')]));
      await h.settle();
      const tk = h.ledger.read.triggerKeys().find((k) => k.startsWith(TK))!;
      const root = h.transport.posts.at(-1)!.ref!;
      await say(h.transport, root, 'f3', 'fixed: rolled back deploy 4f2a1c');
      const [o] = await h.bot.handle(command(h.transport.name, 'cmd-1', tk));
      expect(o).toMatchObject({ status: 'recorded', kind: 'postmortem', triggerKey: tk, filed: true });
      await h.bot.handle(command(h.transport.name, 'cmd-1', tk)); // Slack's retry of the same command
      await h.settle();
      const pms = h.fake.pulls().filter((p) => p.labels.includes('postmortem'));
      expect(pms).toHaveLength(1);
      const content = (await h.remote.show(pms[0]!.head, `postmortems/${pms[0]!.head.slice('reprise/postmortem/'.length)}.md`))!;
      expect(content).toContain('> rolled back deploy 4f2a1c');
      expect(answered(h.transport)).toEqual([
        `Postmortem: 📄 drafting the postmortem of ${tk} as a pull request under postmortems/; its link follows in the incident's thread`,
      ]);
      const told = h.transport.replies
        .map((r) => r.view as NoticeView)
        .filter((v) => v.kind === 'notice')
        .map((v) => inline(v.text));
      expect(told).toContain('postmortem asked for by bob: drafting it as a pull request under postmortems/');
      expect(told).toContain(`postmortem drafted for review: PR #${pms[0]!.number} <https://github.example/acme/kb/pull/${pms[0]!.number}>`);
      expect((await h.events()).filter((e) => e.type === 'postmortem')).toMatchObject([{ triggerKey: tk, user: `${h.transport.name}:U-bob` }]);
    },
  );

  it(
    "per episode (issue 28): the second occurrence's postmortem and fix draft report only its own 👎, notes and acks, and date it by the alert's startsAt",
    { timeout: 60_000 },
    async () => {
      const seed: Record<string, string> = {};
      for (const p of SEED) seed[p] = await readFile(join(REPO_ROOT, 'catalog', p), 'utf8');
      h = await curationHarness({ seed, noModel: true });
      const t = h.transport;
      // Episode 1: 👀, 👎 and a "tried" note, then resolved.
      await h.bot.handle(incidentIntents([crashLoop('eeee1')]));
      await h.settle();
      const root1 = t.posts.at(-1)!.ref!;
      await say(t, root1, 'a1', 'ack');
      await t.inject({
        type: 'reaction',
        eventId: 'v1',
        transport: t.name,
        user: { id: 'U-carol', name: 'carol' },
        target: root1,
        reaction: '-1',
        removed: false,
      });
      await say(t, root1, 'n1', 'note: tried restarting the pods, it did not help');
      await h.settle();
      h.clock.advance(10 * 60_000);
      await h.bot.handle(incidentIntents([crashLoop('eeee1', 'resolved')]));
      await h.settle();
      // Episode 2, an hour later: it fired 5 min before Reprise heard; nobody voted, noted or acked.
      h.clock.advance(60 * 60_000);
      const startsAt = new Date(h.clock.now().getTime() - 5 * 60_000).toISOString();
      await h.bot.handle(incidentIntents([{ ...crashLoop('ffff2'), startsAt }]));
      await h.settle();
      const root2 = t.posts.at(-1)!.ref!;
      await say(t, root2, 'f2', 'fixed: raised the memory limit to 1.5Gi');
      await say(t, root2, 'pm2', 'postmortem');
      await h.settle();
      const pm = h.fake.pulls().find((p) => p.labels.includes('postmortem'))!;
      const content = (await h.remote.show(pm.head, `postmortems/${pm.head.slice('reprise/postmortem/'.length)}.md`))!;
      expect(content).not.toContain('👎');
      expect(content).not.toContain('tried restarting the pods');
      expect(content).not.toContain('acknowledged');
      expect(content).toContain(`- ${startsAt.slice(0, 16).replace('T', ' ')} UTC — fired: checkout-api is crash looping`);
      expect(content).toMatch(/— Reprise posted it after 5 min/);
      const fix = h.fake.pulls().find((p) => p.labels.includes('human-fix'))!;
      const entry = (await h.remote.show(fix.head, `incidents/${fix.head.slice('reprise/kb/'.length)}.md`))!;
      expect(entry).not.toContain('👎');
      expect(entry).not.toContain('tried restarting the pods');

      // The first episode's own postmortem does report them.
      await say(t, root1, 'pm1', 'postmortem');
      await h.settle();
      const pm1 = h.fake
        .pulls()
        .filter((p) => p.labels.includes('postmortem'))
        .find((p) => p.number !== pm.number)!;
      const content1 = (await h.remote.show(pm1.head, `postmortems/${pm1.head.slice('reprise/postmortem/'.length)}.md`))!;
      expect(content1).toContain('judged off-base with 👎');
      expect(content1).toContain('tried restarting the pods, it did not help');
      // People by name, else id: never the ledger's surface-qualified key, never an @ GitHub would link.
      expect(content1).toMatch(/— alice acknowledged it after 10 min/);
      expect(content1).not.toMatch(/rec:|@\u2060?(alice|U-alice)/);
      expect(content1).toMatch(/— resolved after 20 min/);
      // Both drafts are of one trigger: the facts were kept apart by episode, not by trigger.
      expect(content1).toContain(content.split('- **Trigger:** ')[1]!.split('\n')[0]!);
    },
  );

  it('without a forge: the draft is replied in the thread, inert', async () => {
    const { snapshot } = await loadSnapshot(join(REPO_ROOT, 'catalog'));
    const b = await botHarness({ snapshot });
    await b.bot.handle(incidentIntents([crashLoop('bbbb2')]));
    await b.settle();
    const root = b.transport.posts.at(-1)!.ref!;
    await say(b.transport, root, 'f2', `fixed: ${HOSTILE}`);
    await say(b.transport, root, 'pm2', 'postmortem');
    await b.settle();
    const last = b.transport.replies.at(-1)!.view as NoticeView;
    expect(last.icon).toBe('📄');
    const text = inline(last.text);
    expect(text).toMatch(/^postmortem draft \(no forge is configured, so here it is; save it as postmortems\/\S+\.md\):\n# Postmortem: KubePodCrashLooping/);
    expect(text).toContain('## Resolution');
    expect(text).toContain('> rolled back deploy 4f2a1c @');
    expect(text).not.toMatch(/<!channel>|<b>|<!--/);
    expect((await b.events()).filter((e) => e.type === 'postmortem')).toHaveLength(1);
    expect((await b.events()).filter((e) => e.type === 'curate')).toHaveLength(0);
  });

  it('without a forge, /reprise postmortem <trigger>: the draft is the private answer; no thread, no trigger: a clear answer', async () => {
    const { snapshot } = await loadSnapshot(join(REPO_ROOT, 'catalog'));
    const b = await botHarness({ snapshot });
    // A trigger with no incident yet, and no trigger at all: said plainly, nothing recorded.
    await b.bot.handle(command(b.transport.name, 'cmd-0', 'nosuchalert|ns|deployment|x|'));
    await b.bot.handle(command(b.transport.name, 'cmd-00', ''));
    await b.bot.handle(incidentIntents([crashLoop('dddd4')]));
    await b.settle();
    const tk = b.ledger.read.triggerKeys().find((k) => k.startsWith(TK))!;
    const root = b.transport.posts.at(-1)!.ref!;
    await say(b.transport, root, 'f4', `fixed: ${HOSTILE}`);
    await b.settle();
    const repliesBefore = b.transport.replies.length;
    const [o] = await b.bot.handle(command(b.transport.name, 'cmd-2', tk));
    expect(o).toMatchObject({ status: 'recorded', kind: 'postmortem', draft: { path: expect.stringMatching(/^postmortems\/.+\.md$/) } });
    await b.settle();
    const said = answered(b.transport);
    expect(said[0]).toBe('Which trigger?: No trigger is named “nosuchalert|ns|deployment|x|” (`status` lists open incidents).');
    expect(said[1]).toMatch(/^Postmortem: Name the trigger: `postmortem <trigger key>`/);
    expect(said[2]).toMatch(
      /^Postmortem of kubepodcrashlooping\|payments.*: No forge is configured, so here is the draft; save it as postmortems\/\S+\.md:\n# Postmortem: KubePodCrashLooping/,
    );
    expect(said[2]).toContain('> rolled back deploy 4f2a1c @');
    expect(said[2]).not.toMatch(/<!channel>|<b>|<!--/);
    expect(said).toHaveLength(3);
    // Asked outside the thread: the thread gets nothing without a PR to link.
    expect(b.transport.replies).toHaveLength(repliesBefore);
    expect((await b.events()).filter((e) => e.type === 'postmortem')).toHaveLength(1);
  });
});
