import { describe, expect, it } from 'vitest';
import { runEval } from '../../../src/cli/eval.js';
import type { EvalCase } from '../../../src/core/eval/eval-cases.js';
import { refusalCounts, refusals, refusalsMarkdown, refusalsText } from '../../../src/core/eval/refusals.js';
import type { CaseRun } from '../../../src/core/eval/run-cases.js';
import type { Entry } from '../../../src/core/types.js';
import { alertPayload, playbook, recallOpts } from '../recall/recall-fixtures.js';

const run = (over: Partial<CaseRun>): CaseRun => ({
  id: 'c',
  variant: 'name-hidden',
  expected: null,
  fired: null,
  confidence: null,
  ranked: [],
  answer: null,
  trace: [],
  scores: [],
  ...over,
});

const A = 'runbooks/KubeJobFailed.md';
const B = 'runbooks/KubeJobCompletion.md';

describe('refusals', () => {
  const runs: CaseRun[] = [
    run({ id: 'answered', expected: A, fired: A }),
    run({ id: 'wrong', expected: A, fired: B }),
    run({ id: 'negative', variant: 'name-visible' }),
    run({
      id: 'sib',
      expected: A,
      scores: [{ entry: A, score: 20, rank: 0 }],
      nearMiss: { entry: A, gate: 'sibling', reason: 'the alert says neither "fail" nor "completion"' },
      trace: [
        { gate: 'structural', entry: A, passed: true, value: 'scopeless', threshold: null, reason: 'matched by content' },
        { gate: 'sibling', entry: A, passed: false, value: 0.667, threshold: 0.5, reason: 'the alert says neither', rival: B },
      ],
      judgements: [
        { rival: B, overlap: 0.667, own: ['fail'], ownSaid: [], rivalOwn: ['completion'], rivalSaid: [], ownShare: 0, rivalShare: 0, sharedShare: 1, passed: false, reason: 'neither' },
      ],
    }),
    run({
      id: 'margin',
      expected: A,
      scores: [
        { entry: B, score: 21, rank: 0 },
        { entry: A, score: 20, rank: 1 },
      ],
      nearMiss: { entry: B, gate: 'margin', reason: 'only 5% ahead of runbooks/KubeJobFailed.md (needs 20%)' },
      trace: [{ gate: 'margin', entry: B, passed: false, value: 0.048, threshold: 0.2, reason: 'only 5% ahead', rival: A }],
    }),
    run({
      id: 'floor',
      expected: A,
      scores: [{ entry: A, score: 4, rank: 0 }],
      nearMiss: { entry: A, gate: 'margin', reason: 'score 4 below min_score 6' },
      trace: [{ gate: 'margin', entry: A, passed: false, value: 4, threshold: 6, reason: 'score 4 below min_score 6' }],
    }),
    run({ id: 'absent', expected: A }),
  ];
  const rs = refusals(runs, 1);

  it('lists only silent positives, each with the refusing gate', () => {
    expect(rs.map((r) => [r.id, r.gate])).toEqual([
      ['sib', 'sibling'],
      ['margin', 'margin'],
      ['floor', 'min_score'],
      ['absent', 'not a candidate'],
    ]);
  });

  it('says by how much and against which runbook, and whether that rival was the right one', () => {
    expect(rs[0]).toMatchObject({ fold: 1, judged: A, judgedWasRight: true, rival: B, rivalWasRight: false, value: 0, threshold: 0, shortBy: 0 });
    expect(rs[1]).toMatchObject({ judged: B, judgedWasRight: false, rival: A, rivalWasRight: true, expectedRank: 1, value: 0.048, threshold: 0.2 });
    expect(rs[1]!.shortBy).toBeCloseTo(0.152, 6);
    expect(rs[2]).toMatchObject({ value: 4, threshold: 6, shortBy: 2, rival: null });
    expect(rs[3]).toMatchObject({ judged: null, expectedRank: null, rival: null });
  });

  it('counts by gate and by pair, and renders text and markdown', () => {
    const { byGate, pairs } = refusalCounts(rs);
    expect(byGate).toEqual([
      { gate: 'margin', count: 1 },
      { gate: 'min_score', count: 1 },
      { gate: 'not a candidate', count: 1 },
      { gate: 'sibling', count: 1 },
    ]);
    expect(pairs.map((p) => `${p.gate} ${p.judged} ${p.rival}`)).toEqual([`margin ${B} ${A}`, `sibling ${A} ${B}`]);
    const text = refusalsText(rs, 'held out');
    expect(text).toContain('held out: 4 refused true answers');
    expect(text).toContain(`margin [name-hidden, fold 2]: expected ${A} (#2, 20.000); the gate judged ${B}, ahead of it: margin against ${A} (the right one), 0.048 vs 0.200 (short by 0.152)`);
    const md = refusalsMarkdown(rs, 'Held out');
    expect(md).toContain('### Held out: 4 refused true answers');
    expect(md).toContain(`| sib | name-hidden | 2 | ${A} (#1, 20.000) | sibling | the expected one | ${B} |`);
    expect(refusalsMarkdown([], 'None')).toBe('### None: 0 refused true answers\n\n');
  });
});

describe('runEval reports the refused true answers of a real run', () => {
  const book = (name: string, body: string): Entry => playbook(`runbooks/${name}.md`, { title: name, alerts: [name], body });
  const entries = [book('DiskFull', 'The disk is full of logs and data.'), book('LogsGrowing', 'Logs grow and the disk fills.')];

  it('names the margin that stopped an answer and the runner-up it could not beat', () => {
    const cases: EvalCase[] = [
      {
        id: 'disk:hidden',
        variant: 'name-hidden',
        expect: { runbook: 'runbooks/DiskFull.md' },
        payload: alertPayload({ alertname: 'Alert9f1c2d', annotations: { summary: 'disk logs' } }),
      },
    ];
    const r = runEval(entries, cases, recallOpts({ marginGap: 0.9, minScore: 0.1, soloFloor: 0.1 }));
    expect(r.refused).toHaveLength(1);
    expect(r.refused[0]).toMatchObject({ id: 'disk:hidden', gate: 'margin', expected: 'runbooks/DiskFull.md', threshold: 0.9 });
    expect(r.refused[0]!.rival).not.toBeNull();
    expect(r.refused[0]!.shortBy!).toBeGreaterThan(0);
  });
});
