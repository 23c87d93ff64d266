import { describe, expect, it } from 'vitest';
import { kOfN, scoreRun } from '../../../src/core/eval/investigate-score.js';
import { compareMemory, renderMemoryTable } from '../../../src/core/eval/memory-compare.js';
import type { InvestigationResult } from '../../../src/core/investigate/investigator.js';

const result = (causes: Array<{ cause: string; entities?: string[]; evidence?: string[] }>, extra: Partial<InvestigationResult> = {}): InvestigationResult =>
  ({
    status: 'completed',
    finding: { rootCauses: causes.map((c) => ({ confidence: 0.8, entities: [], evidence: [], ...c })) },
    ...extra,
  }) as unknown as InvestigationResult;

const expectation = { entities: ['JAVA_TOOL_OPTIONS', 'OOM'], distractors: ['payments-db', 'TLS'] };

describe('investigation scoring', () => {
  it('full marks for the expected entities; a blamed distractor costs half a point', () => {
    expect(scoreRun(result([{ cause: 'JAVA_TOOL_OPTIONS heap → OOMKilled' }]), expectation, 0.5)).toMatchObject({ score: 1, precision: 1, passed: true });
    const blamed = scoreRun(result([{ cause: 'OOM', entities: ['payments-db'] }]), expectation, 0.5);
    expect(blamed).toMatchObject({ score: 0, precision: 0.5, blamed: ['payments-db'], missed: ['JAVA_TOOL_OPTIONS'], passed: false });
  });

  it('evidence that names a distractor to clear it is not blame', () => {
    expect(scoreRun(result([{ cause: 'JAVA_TOOL_OPTIONS → OOM', evidence: ['payments-db is healthy'] }]), expectation, 0.5).blamed).toEqual([]);
  });

  it('the poisoned case fails unless the recall was withdrawn; no Finding never passes', () => {
    const good = [{ cause: 'JAVA_TOOL_OPTIONS → OOM' }];
    expect(scoreRun(result(good, { recall: { delivered: true } as never }), { ...expectation, recallWithdrawn: true }, 0.5).passed).toBe(false);
    expect(scoreRun(result(good, { recall: { delivered: false } as never }), { ...expectation, recallWithdrawn: true }, 0.5).passed).toBe(true);
    expect(scoreRun({ status: 'degraded', finding: null } as unknown as InvestigationResult, expectation, 0).passed).toBe(false);
  });

  it('k of n', () => {
    const p = { passed: true } as never;
    const f = { passed: false } as never;
    expect(kOfN([p, f, p], 2)).toBe(true);
    expect(kOfN([p, f, f], 2)).toBe(false);
  });

  it('memory on/off sums each side and renders one table', async () => {
    const r = await compareMemory(2, async (i, memory) => ({ path: memory && i === 0 ? 'recall' : 'investigation', modelCalls: memory && i === 0 ? 2 : 8, tokens: memory && i === 0 ? 2000 : 20000, firstAnswerMs: memory && i === 0 ? 5 : 50, correct: true }));
    expect(r.off).toMatchObject({ recalls: 0, modelCalls: 16, tokens: 40000, medianFirstAnswerMs: 50, correct: 2 });
    expect(r.on).toMatchObject({ recalls: 1, modelCalls: 10, tokens: 22000, medianFirstAnswerMs: 28 });
    expect(renderMemoryTable(r).split('\n')).toHaveLength(4);
  });
});
