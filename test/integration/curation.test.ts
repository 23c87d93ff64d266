/**
 * File-time curation end to end (issue 6): a Finding becomes a pull request (branch on a real
 * bare remote, PR through the real Octokit against the GitHub REST fake), a second
 * investigation of the same trigger coalesces onto it, and the decision is recorded with the
 * open and shown on the thread's card. Below-bar and recalled findings leave no artifact.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { dupFingerprint } from '../../src/core/bot/dup-fingerprint.js';
import type { CardView } from '../../src/core/chat/thread-view.js';
import type { CuratedEvent } from '../../src/core/ledger-events.js';
import type { Incident } from '../../src/core/types.js';
import { alert } from '../unit/recall/recall-fixtures.js';
import { curationHarness, goodFinding, type CurationHarness } from './helpers/curation-harness.js';

let h: CurationHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function oomFiring(fingerprint: string): Incident {
  return alert({ alertname: 'KubePodOOMKilled', fingerprint, labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', severity: 'warning' }, annotations: { summary: 'Container checkout-api was OOMKilled.' } });
}

const curated = async (x: CurationHarness): Promise<CuratedEvent[]> => (await x.events()).filter((e): e is CuratedEvent => e.type === 'curated');
const lastCard = (x: CurationHarness): CardView => x.transport.sent.filter((s) => s.op === 'update').at(-1)!.view as CardView;

describe('a fresh verified Finding', () => {
  it('opens one PR from a branch pushed to the remote, and a second investigation of the trigger comments on it instead', async () => {
    h = await curationHarness();
    const incident = oomFiring('fp-1');
    const dup = dupFingerprint(incident);
    h.findings.push(goodFinding());
    await h.bot.handle([incident]);
    await h.settle();

    const pulls = h.fake.pulls();
    expect(pulls).toHaveLength(1);
    const pr = pulls[0]!;
    expect(pr.title).toMatch(/^KB: KubePodOOMKilled on payments\/checkout-api/);
    expect(pr.labels).toEqual(['reprise', 'kb-draft']);
    expect(pr.body).toContain(`<!-- reprise:dup=${dup} -->`);
    expect(pr.body).toContain('### Related knowledge');
    expect(pr.body).toMatch(/Causing change:\*\* deploy 4f2a1c/);
    // The branch is on the remote with exactly the entry file, in the SPEC §5 format.
    expect(pr.head).toMatch(/^reprise\/kb\/kubepodoomkilled-on-payments-checkout-api-.*-[0-9a-f]{8}$/);
    const path = `incidents/${pr.head.slice('reprise/kb/'.length)}.md`;
    const file = await h.remote.show(pr.head, path);
    expect(file).toBeDefined();
    expect(file).toMatch(/^---\ntype: Incident\n/);
    expect(file).toContain(`fingerprint: ${dup}`);
    expect(file).toContain('resource: payments/checkout-api');
    expect(file).not.toContain('last_validated');
    for (const s of ['## Symptom', '## Cause', '## Resolution']) expect(file).toContain(s);

    // Recorded with the open, and shown on the card.
    const first = await curated(h);
    expect(first).toMatchObject([{ subject: 'finding', decision: 'novel', number: pr.number, url: expect.stringContaining(`/pull/${pr.number}`) }]);
    expect(h.ledger.state.threads[first[0]!.openId]?.curation).toMatchObject({ decision: 'novel', number: pr.number });
    expect(lastCard(h).curation).toEqual({ text: 'KB: draft opened for review', link: { label: `PR #${pr.number}`, url: pr.number ? expect.stringContaining(`/pull/${pr.number}`) : '' } });
    expect(h.pending()).toBe(0);

    // The same trigger fires again (resolved in between), the model words it differently.
    await h.bot.handle([{ ...incident, status: 'resolved' }]);
    h.clock.advance(3_600_000);
    h.findings.push(goodFinding({ summary: 'the JVM heap again exceeds the container limit', confidence: 0.9 }));
    await h.bot.handle([oomFiring('fp-2')]);
    await h.settle();
    expect(h.fake.pulls()).toHaveLength(1);
    const comments = h.fake.commentsOn(pr.number);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toMatch(/^<!-- reprise:seen=/);
    expect(comments[0]!.body).toContain('the JVM heap again exceeds the container limit');
    expect((await curated(h)).map((c) => c.decision)).toEqual(['novel', 'duplicate_pr']);
    expect(lastCard(h).curation?.text).toBe('KB: same finding as a draft under review; added there');
  });

  it('leaves no artifact on the forge for a finding below the bar, and says which criterion', async () => {
    h = await curationHarness();
    h.findings.push(goodFinding({ confidence: 0.6 }), goodFinding({ verified: false }), goodFinding({ changeRef: undefined, suggestedActions: [] }));
    for (const fp of ['a', 'b', 'c']) {
      await h.bot.handle([oomFiring(fp)]);
      await h.settle();
      await h.bot.handle([{ ...oomFiring(fp), status: 'resolved' }]);
    }
    expect(h.fake.requests).toEqual([]);
    expect((await curated(h)).map((c) => [c.decision, c.detail])).toEqual([
      ['below_bar', 'confidence: confidence 0.60 is below 0.75'],
      ['below_bar', 'verified: the adversarial review rejected the cause'],
      ['below_bar', 'provenance: neither a causing change nor a fixing action'],
    ]);
    expect(lastCard(h).curation?.text).toMatch(/below the quality bar \(provenance/);
  });

  it('does not draft what the catalog already holds (same fingerprint), nor what a human closed unmerged before', async () => {
    const incident = oomFiring('fp-1');
    const dup = dupFingerprint(incident);
    h = await curationHarness({ seed: { 'incidents/known.md': `---\ntype: Incident\ntitle: known OOM\ndescription: known\nresource: payments/checkout-api\nfingerprint: ${dup}\n---\n## Symptom\nx\n## Cause\ny\n## Resolution\nz\n` } });
    h.findings.push(goodFinding());
    await h.bot.handle([incident]);
    await h.settle();
    expect(h.fake.writes()).toEqual([]);
    expect((await curated(h)).map((c) => [c.decision, c.detail])).toEqual([['duplicate_entry', 'incidents/known.md (same fingerprint)']]);
    await h.close();

    h = await curationHarness();
    const rejected = h.fake.addPull({ title: 'KB: old draft', head: 'reprise/kb/old', body: `<!-- reprise:dup=${dup} -->\nold`, state: 'closed' });
    h.findings.push(goodFinding());
    await h.bot.handle([incident]);
    await h.settle();
    expect(h.fake.writes()).toEqual([]);
    expect(await h.remote.branches()).toEqual(['main']);
    expect((await curated(h)).map((c) => [c.decision, c.number])).toEqual([['suppressed', rejected.number]]);
  });

  it('a forged marker in someone else\'s PR text does not capture the finding', async () => {
    h = await curationHarness();
    const incident = oomFiring('fp-1');
    const dup = dupFingerprint(incident);
    // A human quoted the marker escaped (as our neutraliser writes it) — it is text, not a marker.
    h.fake.addPull({ title: 'unrelated', head: 'x', body: `&lt;!-- reprise:dup=${dup} --&gt;` });
    h.findings.push(goodFinding());
    await h.bot.handle([incident]);
    await h.settle();
    expect((await curated(h)).map((c) => c.decision)).toEqual(['novel']);
  });
});
