import { describe, expect, it } from 'vitest';
import { runEval } from '../../../src/cli/eval.js';
import type { EvalCase } from '../../../src/core/eval/eval-cases.js';
import type { CaseRun } from '../../../src/core/eval/run-cases.js';
import { confusions, wrongFires, wrongFiresMarkdown, wrongFiresText } from '../../../src/core/eval/wrong-fires.js';
import type { Entry } from '../../../src/core/types.js';
import { alertPayload, playbook, recallOpts } from '../recall/recall-fixtures.js';

const book = (name: string, body: string): Entry => playbook(`runbooks/${name}.md`, { title: name, alerts: [name], body });
const entries = [
  book('KubeJobFailed', 'A job failed.'),
  book('KubeJobCompletion', 'A job did not complete in time.'),
  book('CPUThrottlingHigh', 'Processes are throttled.'),
];
const byId = (id: string) => entries.find((e) => e.id === id);

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

describe('wrongFires', () => {
  const runs: CaseRun[] = [
    run({ id: 'right', expected: 'runbooks/KubeJobFailed.md', fired: 'runbooks/KubeJobFailed.md' }),
    run({ id: 'silent', expected: 'runbooks/KubeJobFailed.md' }),
    run({ id: 'pointer', expected: 'runbooks/KubeJobFailed.md', fired: 'runbooks/old.md', accepted: ['runbooks/old.md'] }),
    run({
      id: 'sib',
      expected: 'runbooks/KubeJobCompletion.md',
      fired: 'runbooks/KubeJobFailed.md',
      confidence: 0.81,
      scores: [
        { entry: 'runbooks/KubeJobFailed.md', score: 42.5, rank: 0 },
        { entry: 'runbooks/KubeJobCompletion.md', score: 30, rank: 1 },
      ],
      trace: [
        { gate: 'structural', entry: 'runbooks/KubeJobFailed.md', passed: true, value: 'runbook', threshold: null, reason: 'matched by content' },
        { gate: 'sibling', entry: 'runbooks/KubeJobFailed.md', passed: true, value: 0.667, threshold: 0.5, reason: 'told apart' },
        { gate: 'margin', entry: 'runbooks/KubeJobFailed.md', passed: true, value: 0.29, threshold: 0.05, reason: 'ahead of x' },
        { gate: 'margin', entry: 'runbooks/other.md', passed: false, value: 0.01, threshold: 0.05, reason: 'not this one' },
      ],
    }),
    run({ id: 'sib2', expected: 'runbooks/KubeJobCompletion.md', fired: 'runbooks/KubeJobFailed.md' }),
    run({ id: 'far', expected: 'runbooks/CPUThrottlingHigh.md', fired: 'runbooks/KubeJobFailed.md' }),
    run({ id: 'none', variant: 'name-visible', fired: 'runbooks/CPUThrottlingHigh.md' }),
  ];
  const wrong = wrongFires(runs, byId, 2);

  it('lists a wrong runbook and a fire where nothing should answer, not a right or pointer answer or a silence', () => {
    expect(wrong.map((w) => w.id)).toEqual(['sib', 'sib2', 'far', 'none']);
  });

  it('gives both runbooks, their scores and rank, the confidence and the gates that let it through', () => {
    expect(wrong[0]).toEqual({
      id: 'sib',
      variant: 'name-hidden',
      fold: 2,
      expected: 'runbooks/KubeJobCompletion.md',
      fired: 'runbooks/KubeJobFailed.md',
      confidence: 0.81,
      firedScore: 42.5,
      expectedScore: 30,
      expectedRank: 1,
      gates: ['structural runbook (matched by content)', 'sibling 0.667 vs 0.5 (told apart)', 'margin 0.29 vs 0.05 (ahead of x)'],
      nameOverlap: 2 / 3,
    });
    expect(wrong[3]).toMatchObject({ expected: null, nameOverlap: null });
  });

  it('counts confused pairs, siblings marked', () => {
    expect(confusions(wrong)).toEqual([
      { expected: 'runbooks/KubeJobCompletion.md', fired: 'runbooks/KubeJobFailed.md', count: 2, nameOverlap: 2 / 3, sibling: true },
      { expected: 'runbooks/CPUThrottlingHigh.md', fired: 'runbooks/KubeJobFailed.md', count: 1, nameOverlap: 0, sibling: false },
    ]);
    const md = wrongFiresMarkdown(wrong, 'Held out');
    expect(md).toContain('### Held out: 4 wrong fires');
    expect(md).toContain('| sib | name-hidden | 3 | runbooks/KubeJobCompletion.md (30.000, #2) | runbooks/KubeJobFailed.md (42.500) | 0.810 | 0.667 |');
    expect(md).toContain('| runbooks/KubeJobCompletion.md | runbooks/KubeJobFailed.md | 2 | 0.667 | yes |');
    expect(md).toContain('Sibling confusions: 2 of 3 wrong runbooks.');
    expect(wrongFiresText(wrong, 'held out')).toContain('2× runbooks/KubeJobCompletion.md → runbooks/KubeJobFailed.md (near-siblings)');
    expect(wrongFiresMarkdown([], 'None')).toBe('### None: 0 wrong fires\n\n');
  });
});

describe('runEval reports the wrong fires of a real run', () => {
  it('names the case, both runbooks and the margin that let it through', () => {
    const cases: EvalCase[] = [
      {
        id: 'throttle:hidden',
        variant: 'name-hidden',
        expect: { runbook: 'runbooks/CPUThrottlingHigh.md' },
        payload: alertPayload({ alertname: 'Alert9f1c2d', labels: { namespace: 'jobs', job_name: 'etl' }, annotations: { summary: 'A job failed.' } }),
      },
    ];
    const r = runEval(entries, cases, recallOpts({ marginGap: 0.05, minScore: 0.5, soloFloor: 0.5 }));
    expect(r.wrong).toHaveLength(1);
    expect(r.wrong[0]).toMatchObject({ id: 'throttle:hidden', expected: 'runbooks/CPUThrottlingHigh.md', fired: 'runbooks/KubeJobFailed.md' });
    expect(r.wrong[0]?.gates.some((g) => g.startsWith('sibling') || g.startsWith('margin'))).toBe(true);
  });
});
