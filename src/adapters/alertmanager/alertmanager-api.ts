/**
 * Alertmanager's v2 API as Reprise uses it (issue 12): the alerts it holds, with their
 * silenced / inhibited state, and silences made from a 🔕. Plain `fetch` with a timeout; every
 * failure is a coded error the caller logs, never a crash.
 */
import { RepriseError } from '../../core/errors.js';
import type { AlertmanagerSilencer } from '../../core/bot/bot-context.js';
import type { AlertmanagerAlertState, AlertmanagerAlerts } from '../../core/bot/alertmanager-reconcile.js';

export interface AlertmanagerApiOptions {
  /** Base URL, e.g. `http://alertmanager.monitoring:9093`. */
  url: string;
  timeoutMs: number;
  /** Injected in tests; the global `fetch` otherwise. */
  fetch?: typeof fetch;
}

interface GettableAlert {
  fingerprint?: unknown;
  labels?: unknown;
  status?: { state?: unknown; silencedBy?: unknown; inhibitedBy?: unknown };
}

/** Most alerts read from one answer: a bigger list is a misconfiguration, not a reason to run out of memory. */
const MAX_ALERTS = 200_000;

export class AlertmanagerApi implements AlertmanagerAlerts, AlertmanagerSilencer {
  readonly #base: string;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(opts: AlertmanagerApiOptions) {
    this.#base = opts.url.replace(/\/+$/, '');
    this.#timeoutMs = opts.timeoutMs;
    this.#fetch = opts.fetch ?? fetch;
  }

  async #call(path: string, init: RequestInit = {}): Promise<unknown> {
    let res: Response;
    try {
      res = await this.#fetch(`${this.#base}${path}`, { ...init, signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (err) {
      throw new RepriseError('unavailable', `Alertmanager at ${this.#base} did not answer ${path}: ${(err as Error).message}`, { cause: err });
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) throw new RepriseError('unavailable', `Alertmanager answered ${res.status} to ${init.method ?? 'GET'} ${path}: ${text.slice(0, 200)}`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new RepriseError('unavailable', `Alertmanager's answer to ${path} is not JSON`);
    }
  }

  /** Every alert Alertmanager holds (active, silenced, inhibited, unprocessed). */
  async alerts(): Promise<AlertmanagerAlertState[]> {
    const body = await this.#call('/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true');
    if (!Array.isArray(body)) throw new RepriseError('unavailable', 'Alertmanager /api/v2/alerts did not answer a list');
    const out: AlertmanagerAlertState[] = [];
    for (const raw of body.slice(0, MAX_ALERTS) as GettableAlert[]) {
      if (typeof raw?.fingerprint !== 'string') continue;
      const st = raw.status ?? {};
      const list = (v: unknown): number => (Array.isArray(v) ? v.length : 0);
      out.push({
        fingerprint: raw.fingerprint,
        state: typeof st.state === 'string' ? st.state : 'active',
        silenced: list(st.silencedBy) > 0,
        inhibited: list(st.inhibitedBy) > 0,
      });
    }
    return out;
  }

  /**
   * The labels every one of these alerts Alertmanager holds shares (one alert: all of its
   * labels), and how many of them it holds.
   */
  async #commonLabels(fingerprints: readonly string[]): Promise<{ labels: Record<string, string>; alerts: number }> {
    const body = await this.#call('/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true');
    const wanted = new Set(fingerprints);
    const held = Array.isArray(body) ? (body as GettableAlert[]).filter((a) => typeof a?.fingerprint === 'string' && wanted.has(a.fingerprint)) : [];
    let out: Record<string, string> | undefined;
    for (const a of held) {
      const labels: Record<string, string> = {};
      if (typeof a.labels === 'object' && a.labels !== null)
        for (const [k, v] of Object.entries(a.labels)) if (typeof v === 'string' && v !== '') labels[k] = v;
      if (out === undefined) out = labels;
      else for (const k of Object.keys(out)) if (labels[k] !== out[k]) delete out[k];
    }
    const list = fingerprints.join(', ').slice(0, 200);
    if (out === undefined) throw new RepriseError('not_found', `Alertmanager holds no alert with fingerprint ${list} (it may have resolved)`);
    if (Object.keys(out).length === 0) throw new RepriseError('not_found', `Alertmanager's alerts ${list} share no label to match`);
    return { labels: out, alerts: held.length };
  }

  /**
   * A silence from now until `endsAt` matching exactly the alert's labels — or, given several
   * alerts, the labels they all share; resolves with its id and matchers.
   */
  async silenceAlert(req: {
    fingerprint: string;
    fingerprints?: readonly string[];
    endsAt: string;
    createdBy: string;
    comment: string;
  }): Promise<{ id: string; matchers: string[]; alerts: number }> {
    const { labels, alerts } = await this.#commonLabels(req.fingerprints ?? [req.fingerprint]);
    const matchers = Object.entries(labels).map(([name, value]) => ({ name, value, isRegex: false, isEqual: true }));
    const body = await this.#call('/api/v2/silences', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        matchers,
        startsAt: new Date().toISOString(),
        endsAt: req.endsAt,
        createdBy: req.createdBy.slice(0, 200),
        comment: req.comment.slice(0, 2000),
      }),
    });
    const id = (body as { silenceID?: unknown } | null)?.silenceID;
    if (typeof id !== 'string') throw new RepriseError('unavailable', 'Alertmanager created no silence id');
    return { id, matchers: matchers.map((m) => `${m.name}=${JSON.stringify(m.value)}`), alerts };
  }
}
