/**
 * File-time curation end to end (issue 6): a Finding becomes a pull request (branch on a real
 * bare remote, PR through the real Octokit against the GitHub REST fake), a second
 * investigation of the same trigger coalesces onto it, and the decision is recorded with the
 * open and shown on the thread's card. Below-bar and recalled findings leave no artifact.
 */
import { incidentIntents } from '../../src/core/bot/intent.js';
import { afterEach, describe, expect, it } from 'vitest';
import { dupFingerprint } from '../../src/core/bot/dup-fingerprint.js';
import type { CardView, DetailView } from '../../src/core/chat/thread-view.js';
import type { CuratedEvent } from '../../src/core/ledger-events.js';
import type { Incident } from '../../src/core/types.js';
import { alert } from '../unit/recall/recall-fixtures.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BUNDLED_CATALOG } from '../../src/runtime/open-catalog.js';
import { curationHarness, goodFinding, type CurationHarness } from './helpers/curation-harness.js';

let h: CurationHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function oomFiring(fingerprint: string): Incident {
  return alert({
    alertname: 'KubePodOOMKilled',
    fingerprint,
    labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', severity: 'warning' },
    annotations: { summary: 'Container checkout-api was OOMKilled.' },
  });
}

function bundledCatalog(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, d.name);
      if (d.isDirectory()) walk(p);
      else if (d.name.endsWith('.md')) out[relative(BUNDLED_CATALOG, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(BUNDLED_CATALOG);
  return out;
}

const curated = async (x: CurationHarness): Promise<CuratedEvent[]> => (await x.events()).filter((e): e is CuratedEvent => e.type === 'curated');
const lastCard = (x: CurationHarness): CardView => x.transport.sent.filter((s) => s.op === 'update').at(-1)!.view as CardView;

describe('a fresh verified Finding', () => {
  it('opens one PR from a branch pushed to the remote, and a second investigation of the trigger comments on it instead', async () => {
    h = await curationHarness();
    const incident = oomFiring('fp-1');
    const dup = dupFingerprint(incident);
    h.findings.push(goodFinding());
    await h.bot.handle(incidentIntents([incident]));
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
    expect(h.ledger.read.thread(first[0]!.openId)?.curation).toMatchObject({ decision: 'novel', number: pr.number });
    expect(lastCard(h).curation).toEqual({
      text: 'KB: draft opened for review',
      link: { label: `PR #${pr.number}`, url: pr.number ? expect.stringContaining(`/pull/${pr.number}`) : '' },
    });
    expect(h.pending()).toBe(0);

    // The same trigger fires again (resolved in between), the model words it differently.
    await h.bot.handle(incidentIntents([{ ...incident, status: 'resolved' }]));
    h.clock.advance(3_600_000);
    h.findings.push(goodFinding({ summary: 'the JVM heap again exceeds the container limit', confidence: 0.9 }));
    await h.bot.handle(incidentIntents([oomFiring('fp-2')]));
    await h.settle();
    expect(h.fake.pulls()).toHaveLength(1);
    // The recurrence line of the new thread points at the draft under review.
    const details = h.transport.replies.map((r) => r.view).filter((v): v is DetailView => v.kind === 'detail');
    expect(details.some((d) => d.facts.some(([, v]) => v.includes(`previous: ${pr.number ? `https://github.example/acme/kb/pull/${pr.number}` : ''}`)))).toBe(
      true,
    );
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
      await h.bot.handle(incidentIntents([oomFiring(fp)]));
      await h.settle();
      await h.bot.handle(incidentIntents([{ ...oomFiring(fp), status: 'resolved' }]));
    }
    expect(h.fake.requests).toEqual([]);
    expect((await curated(h)).map((c) => [c.decision, c.detail])).toEqual([
      ['below_bar', 'confidence: confidence 0.60 is below 0.75'],
      ['below_bar', 'verified: the adversarial review rejected the cause'],
      ['below_bar', 'provenance: neither a causing change nor a fixing action'],
    ]);
    expect(lastCard(h).curation?.text).toMatch(/below the quality bar \(provenance/);
  });

  it('does not draft what the catalog already holds (same fingerprint, here a draft recall skips), nor what a human closed unmerged before', async () => {
    const incident = oomFiring('fp-1');
    const dup = dupFingerprint(incident);
    h = await curationHarness({
      seed: {
        'incidents/known.md': `---\ntype: Incident\ntitle: known OOM\ndescription: known\nresource: payments/checkout-api\nstatus: draft\nfingerprint: ${dup}\n---\n## Symptom\nx\n## Cause\ny\n## Resolution\nz\n`,
      },
    });
    h.findings.push(goodFinding());
    await h.bot.handle(incidentIntents([incident]));
    await h.settle();
    expect(h.fake.writes()).toEqual([]);
    expect((await curated(h)).map((c) => [c.decision, c.detail])).toEqual([['duplicate_entry', 'incidents/known.md (same fingerprint)']]);
    await h.close();

    h = await curationHarness();
    const rejected = h.fake.addPull({ title: 'KB: old draft', head: 'reprise/kb/old', body: `<!-- reprise:dup=${dup} -->\nold`, state: 'closed' });
    h.findings.push(goodFinding());
    await h.bot.handle(incidentIntents([incident]));
    await h.settle();
    expect(h.fake.writes()).toEqual([]);
    expect(await h.remote.branches()).toEqual(['main']);
    expect((await curated(h)).map((c) => [c.decision, c.number])).toEqual([['suppressed', rejected.number]]);
  });

  it("a verified cause fills an existing entry's empty Cause through a PR that edits that file, once; a written Cause is never overridden", async () => {
    const incident = oomFiring('fp-1');
    const dup = dupFingerprint(incident);
    const known = `---\ntype: Incident\ntitle: known OOM\ndescription: known\nresource: payments/checkout-api\nstatus: draft\nfingerprint: ${dup}\n---\n## Symptom\nx\n\n## Cause\nNot recorded.\n\n## Resolution\nrolled back\n`;
    h = await curationHarness({ seed: { 'incidents/known.md': known } });
    h.findings.push(goodFinding({ rootCauses: [{ cause: 'the heap <!channel> outgrew *the* limit', confidence: 0.9, evidence: ['exit 137'], entities: [] }] }));
    await h.bot.handle(incidentIntents([incident]));
    await h.settle();
    const pulls = h.fake.pulls();
    expect(pulls).toHaveLength(1);
    const pr = pulls[0]!;
    expect(pr.head).toBe('reprise/amend/incidents/known');
    expect(pr.body).toContain('this PR edits that file; it adds no new entry');
    expect(pr.body).toContain('From a verified investigation (main-model):');
    const edited = (await h.remote.show(pr.head, 'incidents/known.md'))!;
    const cause = edited.split('## Cause\n\n')[1]!.split('\n## ')[0]!;
    expect(cause).toContain('outgrew');
    expect(cause).not.toContain('Not recorded');
    expect(cause).not.toContain('<!channel>');
    expect(cause).toMatch(/— from a verified investigation \(main-model\) on \d{4}-\d{2}-\d{2}/);
    expect(edited.split('## Resolution\n\n')[1]).toContain('rolled back');
    expect((await curated(h)).map((c) => [c.decision, c.number])).toEqual([['amend_pr', pr.number]]);
    expect(lastCard(h).curation?.text).toBe("KB: the cause written into incidents/known.md's Cause, for review");
    await h.close();

    // The entry already says why: the finding is a duplicate, nothing is written.
    h = await curationHarness({ seed: { 'incidents/known.md': known.replace('Not recorded.', 'the heap limit') } });
    h.findings.push(goodFinding());
    await h.bot.handle(incidentIntents([incident]));
    await h.settle();
    expect(h.fake.writes()).toEqual([]);
    expect((await curated(h)).map((c) => c.decision)).toEqual(['duplicate_entry']);
  });

  it("a forged marker in someone else's PR text does not capture the finding", async () => {
    h = await curationHarness();
    const incident = oomFiring('fp-1');
    const dup = dupFingerprint(incident);
    // A human quoted the marker escaped (as our neutraliser writes it) — it is text, not a marker.
    h.fake.addPull({ title: 'unrelated', head: 'x', body: `&lt;!-- reprise:dup=${dup} --&gt;` });
    h.findings.push(goodFinding());
    await h.bot.handle(incidentIntents([incident]));
    await h.settle();
    expect((await curated(h)).map((c) => c.decision)).toEqual(['novel']);
  });
});

describe('the loop closes', () => {
  it('PR merged → the catalog syncs from the remote → the next firing is an instant recall of the new entry', async () => {
    // A realistic remote: the bundled starter catalog (BM25 needs a corpus to tell terms apart).
    h = await curationHarness({ seed: bundledCatalog() });
    const firing = (fp: string): Incident =>
      alert({
        alertname: 'KubePodOOMKilled',
        fingerprint: fp,
        labels: { namespace: 'billing', pod: 'ledger-writer-6b7c9d-q2w3e', severity: 'warning' },
        annotations: { summary: 'Container ledger-writer was OOMKilled.' },
      });
    expect(h.bot.preview(firing('fp-0')).answer?.kind).not.toBe('incident'); // at most a runbook: nothing known about this workload
    h.findings.push(
      goodFinding({
        summary: 'ledger-writer is OOMKilled: the batch import loads whole files into memory',
        rootCauses: [
          {
            cause: 'ledger-writer batch import buffers whole CSV files in memory; files over 600 MB exceed the 1Gi limit',
            confidence: 0.88,
            evidence: ['OOMKilled during import job 4411', 'import file 812 MB'],
            entities: ['ledger-writer'],
          },
        ],
        suggestedActions: [{ action: 'stream the import (IMPORT_STREAMING=true) or split files above 500 MB', reversible: true }],
        changeRef: undefined,
      }),
    );
    await h.bot.handle(incidentIntents([firing('fp-1')]));
    await h.settle();
    expect((await curated(h)).map((c) => c.decision)).toEqual(['novel']);
    const pr = h.fake.pulls()[0]!;
    // A human merges: the branch lands on main of the remote, the forge says merged.
    await h.remote.merge(pr.head);
    h.fake.merge(pr.number);
    await h.bot.handle(incidentIntents([{ ...firing('fp-1'), status: 'resolved' }]));
    // What `reprise catalog sync` does: a fresh index of the remote's main.
    const snap = await h.syncCatalog();
    const path = `incidents/${pr.head.slice('reprise/kb/'.length)}.md`;
    expect(snap.byId.get(path)?.resource?.raw).toBe('billing/ledger-writer');
    h.clock.advance(3_600_000);
    const requestsBefore = h.fake.requests.length;
    await h.bot.handle(incidentIntents([firing('fp-2')]));
    await h.settle();
    // The next firing is answered from the new entry (reranked and verified by the model), not investigated afresh.
    const findings = (await h.events()).filter((e) => e.type === 'finding');
    expect(findings.at(-1)).toMatchObject({ kind: 'recall', status: 'completed', entry: path });
    expect((await curated(h)).map((c) => [c.decision, c.detail])).toEqual([
      ['novel', undefined],
      ['recalled', `answered from ${path}`],
    ]);
    expect(lastCard(h).headline).toMatchObject({ answer: 'instant', entry: path });
    expect(lastCard(h).curation?.text).toBe(`KB: answered from the catalog (answered from ${path}); nothing to draft`);
    // A recalled finding is not novel: nothing more on the forge.
    expect(h.fake.requests.length).toBe(requestsBefore);
  });
});
