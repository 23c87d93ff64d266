/**
 * Memory on/off (issue 11 "prove what memory saves"): the same incident sequence answered
 * with recall disabled and enabled, side by side — model calls, tokens, time to first answer
 * and correctness. The runner takes the answering pipeline as a function, so the bot can
 * drive it end to end and `reprise eval investigate --memory` can drive the engine alone.
 */

/** What one incident cost and whether the answer was right. */
export interface MemoryAnswer {
  /** How it was answered: a delivered recall, a fresh investigation, or nothing. */
  path: 'recall' | 'investigation' | 'none';
  modelCalls: number;
  tokens: number;
  /** From the incident to the first answer a human could read, ms. */
  firstAnswerMs: number;
  correct: boolean;
}

export type AnswerWith = (index: number, memory: boolean) => Promise<MemoryAnswer>;

export interface MemorySide {
  memory: boolean;
  incidents: number;
  recalls: number;
  modelCalls: number;
  tokens: number;
  /** Median time to first answer, ms. */
  medianFirstAnswerMs: number;
  correct: number;
  answers: MemoryAnswer[];
}

function median(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Runs the sequence with memory off, then on (sequentially: timings must not share cores). */
export async function compareMemory(count: number, answer: AnswerWith): Promise<{ off: MemorySide; on: MemorySide }> {
  const side = async (memory: boolean): Promise<MemorySide> => {
    const answers: MemoryAnswer[] = [];
    for (let i = 0; i < count; i++) answers.push(await answer(i, memory));
    return {
      memory,
      incidents: count,
      recalls: answers.filter((a) => a.path === 'recall').length,
      modelCalls: answers.reduce((s, a) => s + a.modelCalls, 0),
      tokens: answers.reduce((s, a) => s + a.tokens, 0),
      medianFirstAnswerMs: Math.round(median(answers.map((a) => a.firstAnswerMs))),
      correct: answers.filter((a) => a.correct).length,
      answers,
    };
  };
  const off = await side(false);
  const on = await side(true);
  return { off, on };
}

/** The side-by-side table for eval/README.md. */
export function renderMemoryTable(r: { off: MemorySide; on: MemorySide }): string {
  const row = (s: MemorySide) => `| ${s.memory ? 'on' : 'off'} | ${s.incidents} | ${s.recalls} | ${s.modelCalls} | ${s.tokens} | ${s.medianFirstAnswerMs} | ${s.correct}/${s.incidents} |`;
  return ['| memory | incidents | recalls | model calls | tokens | median time to first answer (ms) | correct |', '|---|---|---|---|---|---|---|', row(r.off), row(r.on)].join('\n');
}
