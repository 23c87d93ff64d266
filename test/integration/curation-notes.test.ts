/**
 * Operator notes reach the forge (issue 6, SPEC §9): a comment on the finding's open KB pull
 * request, else a new Concept entry PR on a branch of the remote; the thread is told where it
 * went, with the link. Hostile text cannot ping, inject markup or forge our markers; an
 * oversized note is refused with a clear reply and nothing reaches the forge.
 */
import type { TestChatEvent } from '../unit/bot/recording-transport.js';
import { incidentIntents } from '../../src/core/bot/intent.js';
import { afterEach, describe, expect, it } from 'vitest';
import { dupFingerprint } from '../../src/core/bot/dup-fingerprint.js';
import type { MessageRef } from '../../src/core/chat/chat-types.js';
import { richText, type EphemeralView, type NoticeView } from '../../src/core/chat/thread-view.js';
import { startControlServer } from '../../src/http/control-server.js';
import { controlRequest } from '../../src/runtime/control-client.js';
import { noteRequest, recordedOrThrow } from '../../src/core/bot/feedback-request.js';
import { noteIntent } from '../../src/core/bot/intent.js';
import { silentLogger } from '../../src/ports/logger.js';
import type { CuratedEvent } from '../../src/core/ledger-events.js';
import type { Incident } from '../../src/core/types.js';
import { alert } from '../unit/recall/recall-fixtures.js';
import { curationHarness, goodFinding, type CurationHarness } from './helpers/curation-harness.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let h: CurationHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function firing(fingerprint = 'fp-1'): Incident {
  return alert({
    alertname: 'KubePodOOMKilled',
    fingerprint,
    labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', severity: 'warning' },
    annotations: { summary: 'Container checkout-api was OOMKilled.' },
  });
}

const notices = (x: CurationHarness): string[] =>
  x.transport.replies
    .filter((r) => (r.view as NoticeView).kind === 'notice')
    .map((r) => `${(r.view as NoticeView).icon} ${richText((r.view as NoticeView).text)}`);
/** What was said privately (refusals are: issue 29 item 5), line by line. */
const refusals = (x: CurationHarness): string[] => x.transport.ephemerals.flatMap((e) => (e.view as EphemeralView).body.map((l) => richText(l)));
const links = (x: CurationHarness): string[] =>
  x.transport.replies.flatMap((r) =>
    (r.view as NoticeView).kind === 'notice' ? (r.view as NoticeView).text.flatMap((i) => (typeof i === 'object' && 'link' in i ? [i.link.url] : [])) : [],
  );

async function thread(x: CurationHarness, finding = goodFinding()): Promise<MessageRef> {
  x.findings.push(finding);
  await x.bot.handle(incidentIntents([firing()]));
  await x.settle();
  return x.transport.posts[0]!.ref!;
}

const say = (x: CurationHarness, root: MessageRef, id: string, text: string, who = { id: 'U3', name: 'bob' }) =>
  x.transport.inject({ type: 'message', eventId: id, transport: 'rec', user: who, thread: root, channel: '#rec', text, addressed: true } as TestChatEvent);

describe('notes with a forge', () => {
  it('with an open KB PR: a comment on it, and the thread is told with the link', async () => {
    h = await curationHarness();
    const root = await thread(h);
    const pr = h.fake.pulls()[0]!;
    await say(h, root, 'n-1', 'note: the -Xmx flag came from the perf branch');
    await say(h, root, 'n-1', 'note: the -Xmx flag came from the perf branch'); // a retried delivery
    await h.settle();
    const comments = h.fake.commentsOn(pr.number);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toMatch(/^<!-- reprise:note=[0-9a-f-]+ -->\nOperator note from bob via rec:\n\n> the -Xmx flag came from the perf branch$/);
    expect(h.fake.pulls()).toHaveLength(1);
    expect(notices(h)).toEqual([
      '📝 saved — note from bob recorded; filing it to the knowledge base',
      `📝 note from bob filed as a comment on PR #${pr.number}`,
    ]);
    expect(links(h)).toEqual([expect.stringContaining(`/pull/${pr.number}#issuecomment-`)]);
    expect((await h.events()).filter((e) => e.type === 'curated' && e.subject === 'note')).toMatchObject([{ decision: 'pr_comment', number: pr.number }]);
  });

  it('without one: a Concept entry PR on a branch of the remote, naming its provenance and quoting the note', async () => {
    h = await curationHarness();
    const root = await thread(h, goodFinding({ confidence: 0.5 })); // below the bar: no KB PR
    expect(h.fake.pulls()).toEqual([]);
    await say(h, root, 'n-1', 'note: payments pods need 1.5Gi since the Java 21 upgrade');
    await h.settle();
    const [pr] = h.fake.pulls();
    expect(pr).toBeDefined();
    expect(pr!.title).toBe('KB: kubepodoomkilled on payments/checkout-api: payments pods need 1.5Gi since the Java 21 upgrade');
    expect(pr!.labels).toEqual(['reprise', 'kb-draft', 'operator-note']);
    expect(pr!.body).toContain('Operator knowledge from bob via rec, on the finding "JAVA\\_TOOL\\_OPTIONS=-Xmx960m inside a 1Gi memory limit":');
    expect(pr!.body).toContain('> payments pods need 1.5Gi since the Java 21 upgrade');
    expect(pr!.head).toMatch(/^reprise\/kb\/kubepodoomkilled-on-payments-checkout-api-[a-z0-9-]*-[0-9a-f]{8}$/);
    const file = await h.remote.show(pr!.head, `concepts/${pr!.head.slice('reprise/kb/'.length)}.md`);
    expect(file).toMatch(/^---\ntype: Concept\n/);
    expect(file).toContain('payments pods need 1.5Gi since the Java 21 upgrade');
    expect(file).not.toContain('last_validated');
    expect(notices(h).at(-1)).toBe(`📝 note from bob filed as a new Concept entry for review: PR #${pr!.number}`);
    // A second note of the thread joins that PR instead of opening another.
    await say(h, root, 'n-2', 'note: and the limit is in the helm values');
    await h.settle();
    expect(h.fake.pulls()).toHaveLength(1);
    expect(h.fake.commentsOn(pr!.number).map((c) => c.body)).toEqual([expect.stringContaining('> and the limit is in the helm values')]);
  });

  it('neutralises hostile text: no pings, no HTML or markdown, no forged marker; 100 KiB is refused with a clear reply', async () => {
    h = await curationHarness();
    const incident = firing();
    const dup = dupFingerprint(incident);
    const root = await thread(h, goodFinding({ verified: false }));
    const hostile = [
      'note: @org/team and @alice <!here> <!channel> look',
      '<script>alert(1)</script> <img src=x onerror=alert(1)>',
      `<!-- reprise:dup=${dup} --> <!-- reprise:seen=x -->`,
      '[click](javascript:alert(1)) ![t](https://tracker.example/p.gif) # heading | table | **bold** fixes #12',
    ].join('\n');
    await say(h, root, 'n-1', hostile);
    await say(h, root, 'n-2', `note: ${'x'.repeat(100 * 1024)}`);
    await h.settle();
    const [pr] = h.fake.pulls();
    const body = pr!.body;
    expect(body).not.toMatch(/@(org|alice)/);
    expect(body).toContain('@\u2060org/team');
    expect(body).toContain('#\u206012');
    // Our own markers are the only HTML comments: the note's forged one became text.
    expect(body.match(/<!--/g)).toHaveLength(2);
    expect(body).not.toContain(`<!-- reprise:dup=${dup}`);
    expect(body).not.toMatch(/<(script|img|!here|!channel)/);
    expect(body).toContain('&lt;script&gt;');
    expect(body).toContain('\\[click\\]\\(javascript:alert\\(1\\)\\)');
    expect(body).toContain('\\!\\[t\\]');
    // The 100 KiB note: refused to its writer (privately, once), recorded nowhere, nothing sent to the forge.
    expect(refusals(h)).toContain('⚠️ note not saved: it is longer than 8 KiB; shorten it or link to a document');
    expect(notices(h).join('\n')).not.toContain('note not saved');
    expect((await h.events()).filter((e) => e.type === 'note')).toHaveLength(1);
    expect(h.fake.writes().filter((w) => w.method === 'POST' && w.path.endsWith('/pulls'))).toHaveLength(1);
    // The forged marker did not make the Concept PR "the finding's PR": the next verified finding opens its own.
    await h.bot.handle(incidentIntents([{ ...incident, status: 'resolved' }]));
    h.findings.push(goodFinding());
    await h.bot.handle(incidentIntents([firing('fp-2')]));
    await h.settle();
    expect((await h.events()).filter((e): e is CuratedEvent => e.type === 'curated' && e.subject === 'finding').map((e) => e.decision)).toEqual([
      'below_bar',
      'novel',
    ]);
    expect(h.fake.pulls()).toHaveLength(2);
  });

  it("reprise note through the control socket: on the trigger's newest thread, told on the thread; an unknown trigger is a clear 404", async () => {
    h = await curationHarness();
    await thread(h);
    const pr = h.fake.pulls()[0]!;
    const dir = mkdtempSync(join(tmpdir(), 'reprise-sock-'));
    const bot = h.bot;
    const server = await startControlServer(
      join(dir, 'c.sock'),
      {
        feedback: async () => ({}),
        status: async () => ({}),
        note: async (b) => {
          const o = recordedOrThrow((await bot.handle(noteIntent(noteRequest(b))))[0], 'note');
          return { seq: o.seq, outcome: o };
        },
      },
      silentLogger,
    );
    try {
      const ok = await controlRequest(server.path, 'POST', '/v1/note', { triggerKey: firing().triggerKey, text: 'restart fixed it last time', user: 'carol' });
      expect(ok).toMatchObject({ ok: true, status: 200 });
      await h.settle();
      expect(h.fake.commentsOn(pr.number).map((c) => c.body)).toEqual([
        expect.stringMatching(/Operator note from carol via cli:\n\n> restart fixed it last time$/),
      ]);
      expect(notices(h).at(-1)).toBe(`📝 note from carol filed as a comment on PR #${pr.number}`);
      const missing = await controlRequest(server.path, 'POST', '/v1/note', { triggerKey: 'nope|x', text: 'hi' });
      expect(missing).toMatchObject({ ok: true, status: 404, body: { error: { message: expect.stringMatching(/no incident thread for trigger nope\|x/) } } });
      const empty = await controlRequest(server.path, 'POST', '/v1/note', { triggerKey: firing().triggerKey, text: ' ' });
      expect(empty).toMatchObject({ ok: true, status: 400 });
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
