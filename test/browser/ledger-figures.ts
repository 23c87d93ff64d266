/**
 * The memory view's figures computed from the raw events (`reprise ledger events --json`), the
 * way docs/memory-view.md defines them, independently of the read model the pages render
 * from: the browser suite compares what the page shows with these.
 */

/** One line of `reprise ledger events --json`. */
export type EventRow = Record<string, unknown> & { seq: number; type: string; at: string };

export interface Figures {
  'answers-instant': number;
  'answers-runbook': number;
  'answers-investigation': number;
  'answers-degraded': number;
  'answers-silenced': number;
  'model-calls': number;
  'tokens-spent': number;
  acks: number;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The UTC days of the overview's period: today and the `days - 1` before it. */
export function periodDays(now: Date, days: number): Set<string> {
  const out = new Set<string>();
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  for (let i = 0; i < days; i++) out.add(new Date(today - i * 86_400_000).toISOString().slice(0, 10));
  return out;
}

/**
 * Answers by kind, in the day each open was recorded: an open recalled as an Incident is ⚡, a
 * runbook 📚, anything else 🔎 — unless its finding says otherwise (the model's verified recall
 * makes it ⚡, a degraded investigation makes it degraded). 🔕: firings a silence dropped.
 * Model calls and tokens: every finding and answered question, in its own day. Acks: threads
 * whose first acknowledgement fell in the period.
 */
export function figuresFromEvents(rows: readonly EventRow[], inPeriod: (iso: string) => boolean): Figures {
  const f: Figures = {
    'answers-instant': 0,
    'answers-runbook': 0,
    'answers-investigation': 0,
    'answers-degraded': 0,
    'answers-silenced': 0,
    'model-calls': 0,
    'tokens-spent': 0,
    acks: 0,
  };
  const kindOf = new Map<string, { cls: 'instant' | 'runbook' | 'investigation' | 'degraded'; at: string }>();
  const newestOpen = new Map<string, string>();
  const acked = new Set<string>();
  for (const r of rows) {
    switch (r.type) {
      case 'open': {
        const id = str(r['id']);
        const cls =
          r['kind'] === 'recall' && r['answerKind'] !== 'runbook'
            ? 'instant'
            : r['answerKind'] === 'runbook' || r['kind'] === 'recall'
              ? 'runbook'
              : 'investigation';
        if (id !== undefined) {
          kindOf.set(id, { cls, at: r.at });
          newestOpen.set(String(r['triggerKey']), id);
        } else if (inPeriod(r.at)) f[`answers-${cls}`] += 1;
        break;
      }
      case 'finding': {
        if (inPeriod(r.at)) {
          f['model-calls'] += num(r['calls']);
          f['tokens-spent'] += num(r['tokensIn']) + num(r['tokensOut']);
        }
        const o = kindOf.get(String(r['openId']));
        if (!o) break;
        if (r['kind'] === 'recall' && r['status'] === 'completed' && r['entry'] !== undefined) o.cls = 'instant';
        else if (r['status'] === 'degraded' && o.cls === 'investigation') o.cls = 'degraded';
        break;
      }
      case 'question_answered':
        if (inPeriod(r.at)) {
          f['model-calls'] += num(r['calls']);
          f['tokens-spent'] += num(r['tokensIn']) + num(r['tokensOut']);
        }
        break;
      case 'noise':
        if (r['action'] === 'drop' && r['reason'] === 'silence' && inPeriod(r.at)) f['answers-silenced'] += 1;
        break;
      case 'ack': {
        const thread = str(r['openId']) ?? newestOpen.get(String(r['triggerKey']));
        if (thread === undefined || acked.has(thread)) break;
        acked.add(thread);
        if (inPeriod(r.at)) f.acks += 1;
        break;
      }
      default:
        break;
    }
  }
  for (const o of kindOf.values()) if (inPeriod(o.at)) f[`answers-${o.cls}`] += 1;
  return f;
}
