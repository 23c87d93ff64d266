/**
 * In-memory implementations of the investigation memory ports, for the CLI, tests and eval;
 * the bot backs the same ports with its ledger.
 */
import type { FindingStore, PriorFinding, TokenMeter } from '../../ports/investigation-memory.js';
import { tokenize } from '../tokenize.js';

export class InMemoryFindingStore implements FindingStore {
  readonly #all: PriorFinding[] = [];

  async forTrigger(triggerKey: string, limit: number): Promise<PriorFinding[]> {
    return this.#all
      .filter((f) => f.triggerKey === triggerKey)
      .reverse()
      .slice(0, limit);
  }

  /** Similar = most shared terms between `text` and the finding's summary and top cause. */
  async similar(text: string, limit: number, excludeTrigger?: string): Promise<PriorFinding[]> {
    const q = new Set(tokenize(text));
    return this.#all
      .filter((f) => f.triggerKey !== excludeTrigger)
      .map((f) => ({ f, n: tokenize(`${f.summary} ${f.topCause ?? ''}`).filter((t) => q.has(t)).length }))
      .filter((x) => x.n > 0)
      .sort((a, b) => b.n - a.n)
      .slice(0, limit)
      .map((x) => x.f);
  }

  async add(finding: PriorFinding): Promise<void> {
    this.#all.push(finding);
  }
}

export class InMemoryTokenMeter implements TokenMeter {
  readonly #days = new Map<string, number>();
  async spent(day: string): Promise<number> {
    return this.#days.get(day) ?? 0;
  }
  async add(day: string, tokens: number): Promise<void> {
    this.#days.set(day, (this.#days.get(day) ?? 0) + tokens);
  }
}
