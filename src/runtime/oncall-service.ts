/**
 * Who is on call, as `serve` asks it (issue 32): the on-call route of an incident (first
 * matching `oncall.routes` rule, else `default`), its provider's answer — kept until the shift
 * ends (or `oncall.cache`) — with each person's chat ids (from `oncall.people`, else looked up by
 * email on the surfaces that can, kept as long), all within a time budget: past it the answer is
 * "unknown (… did not answer within 1.5 s)" and nothing waits longer. The provider's late answer
 * still lands in the cache for the next card.
 */
import type { Intent } from '../core/bot/intent.js';
import { compileRule, type TriggerRule } from '../core/bot/trigger-policy.js';
import type { EphemeralView } from '../core/chat/thread-view.js';
import { onCallText, onCallView, sourceLabel, type RoutedOnCall } from '../core/oncall/oncall-view.js';
import type { Incident } from '../core/types.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { ChatIdentityLookup, OnCallAnswer, OnCallPerson, OnCallProvider, OnCallQuery } from '../ports/oncall.js';

/** A person of `oncall.people`: their email and the chat ids given in config. */
export interface OnCallDirectoryEntry {
  name: string;
  email?: string | undefined;
  /** Surface → user id, as configured (Matrix has no lookup: only these). */
  chat: Record<string, string>;
}

export interface OnCallRoute {
  name: string;
  /** Absent for `default`. */
  match?: TriggerRule;
  provider: OnCallProvider | undefined;
}

export interface OnCallServiceOptions {
  /** In order, first match wins; the one named `default` (no match) answers the rest. */
  routes: readonly OnCallRoute[];
  people: readonly OnCallDirectoryEntry[];
  lookups: readonly ChatIdentityLookup[];
  clock: Clock;
  logger: Logger;
  /** Longest a caller waits for an answer. */
  budgetMs: number;
  /** How long an answer without a shift end, or an unknown one, is kept. */
  cacheMs: number;
  /** Told when an answer a card could not wait for came in after all (the cards are edited). */
  onLate?: (late: RoutedOnCall) => void;
}

interface Cached {
  answer: OnCallAnswer;
  expires: number;
}

/** Cached answers and ids at most (routes × services, and people × surfaces, are few). */
const MAX_CACHED = 1000;

export class OnCallService {
  readonly #o: OnCallServiceOptions;
  readonly #routes: Array<OnCallRoute & { test?: (i: Incident) => boolean }>;
  readonly #answers = new Map<string, Cached>();
  readonly #asking = new Map<string, Promise<OnCallAnswer>>();
  readonly #ids = new Map<string, { id: string | undefined; expires: number }>();
  readonly #late = new Set<Promise<OnCallAnswer>>();

  constructor(o: OnCallServiceOptions) {
    this.#o = o;
    this.#routes = o.routes.map((r) => (r.match ? { ...r, test: compileRule(r.match) } : r));
  }

  /** The route names `/reprise oncall` knows. */
  routeNames(): string[] {
    return this.#routes.map((r) => r.name);
  }

  /** The on-call question for an incident: its route, and its PagerDuty service when it came from PagerDuty. */
  queryOf(incident: Incident): OnCallQuery {
    const route = this.#routes.find((r) => r.test?.(incident))?.name ?? 'default';
    const service = incident.labels['pagerduty_service'];
    return service ? { route, service } : { route };
  }

  /** Who is on call, within the budget: never rejects, never waits past it. */
  async lookup(q: OnCallQuery, budgetMs = this.#o.budgetMs): Promise<OnCallAnswer> {
    return (await this.#timed(q, budgetMs)).answer;
  }

  /** The answer within the budget, and the provider's own answer still on its way when the budget won. */
  async #timed(q: OnCallQuery, budgetMs: number): Promise<{ answer: OnCallAnswer; pending?: Promise<OnCallAnswer> }> {
    const now = this.#o.clock.now().getTime();
    const key = `${q.route}|${q.service ?? ''}`;
    const cached = this.#answers.get(key);
    if (cached && cached.expires > now) return { answer: cached.answer };
    const route = this.#routes.find((r) => r.name === q.route);
    const provider = route?.provider;
    if (!provider)
      return { answer: { known: false, reason: route ? `no on-call source for the ${q.route} route` : `no on-call route named ${q.route}`, source: 'config' } };
    let asking = this.#asking.get(key);
    if (!asking) {
      asking = this.#ask(provider, q, key).finally(() => this.#asking.delete(key));
      this.#asking.set(key, asking);
    }
    const pending = asking;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<{ answer: OnCallAnswer; pending: Promise<OnCallAnswer> }>((resolve) => {
      timer = setTimeout(
        () =>
          resolve({
            answer: { known: false, reason: `${sourceLabel(provider.source)} did not answer within ${seconds(budgetMs)}`, source: provider.source },
            pending,
          }),
        budgetMs,
      );
      timer.unref?.();
    });
    try {
      return await Promise.race([pending.then((answer) => ({ answer })), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A late answer (once per provider call, however many cards waited for it) is handed on when it names someone. */
  #whenLate(q: OnCallQuery, pending: Promise<OnCallAnswer>): void {
    if (this.#late.has(pending)) return;
    this.#late.add(pending);
    void pending.then((answer) => {
      this.#late.delete(pending);
      if (answer.known) this.#o.onLate?.({ route: q.route, ...(q.service ? { service: q.service } : {}), answer });
    });
  }

  /**
   * The firing intents with who is on call for them (critical firings only), each looked up within
   * the budget, at once: a batch waits at most one budget.
   */
  async enrich(intents: readonly Intent[]): Promise<Intent[]> {
    const wanted = intents.map((i) =>
      i.type === 'firing' && !i.onCall && i.incident.severity === 'critical' && i.incident.status === 'firing' ? i : undefined,
    );
    if (!wanted.some((w) => w !== undefined)) return [...intents];
    const answers = await Promise.all(
      wanted.map(async (w): Promise<RoutedOnCall | undefined> => {
        if (!w) return undefined;
        const q = this.queryOf(w.incident);
        const { answer, pending } = await this.#timed(q, this.#o.budgetMs);
        if (pending) this.#whenLate(q, pending);
        return { route: q.route, ...(q.service ? { service: q.service } : {}), answer, ...(pending ? { late: true } : {}) };
      }),
    );
    return intents.map((intent, n) => {
      const onCall = answers[n];
      return onCall && intent.type === 'firing' ? { ...intent, onCall } : intent;
    });
  }

  /** `/reprise oncall [route]` (and `reprise oncall`): who is on call, for the asker on `via`. */
  async answerFor(route: string | undefined, via: string): Promise<EphemeralView> {
    const name = route?.trim() || 'default';
    const answer = await this.lookup({ route: name });
    const view = onCallView(answer, via, this.#o.clock.now());
    const routes = this.routeNames();
    return {
      kind: 'ephemeral',
      title: `📟 On call · ${name}`,
      body: [onCallText(view, via), ...(routes.length > 1 ? [[`routes: ${routes.join(', ')}`]] : [])],
    };
  }

  async #ask(provider: OnCallProvider, q: OnCallQuery, key: string): Promise<OnCallAnswer> {
    const now = this.#o.clock.now();
    let answer: OnCallAnswer;
    try {
      answer = await provider.whoIsOnCall(q, now);
    } catch (err) {
      answer = { known: false, reason: `${sourceLabel(provider.source)} failed: ${(err as Error).message.slice(0, 120)}`, source: provider.source };
    }
    if (answer.known) {
      const expires = answer.until ? Math.min(Date.parse(answer.until), now.getTime() + 24 * 3_600_000) : now.getTime() + this.#o.cacheMs;
      answer = { ...answer, people: await Promise.all(answer.people.map((p) => this.#withIds(p, expires))) };
      this.#keep(this.#answers, key, { answer, expires: Math.max(expires, now.getTime() + 1000) });
    } else {
      this.#o.logger.warn({ route: q.route, source: answer.source, reason: answer.reason }, 'who is on call is unknown');
      this.#keep(this.#answers, key, { answer, expires: now.getTime() + this.#o.cacheMs });
    }
    return answer;
  }

  /** The person with their chat ids: the configured ones, then each surface's lookup by email (kept until `expires`). */
  async #withIds(p: OnCallPerson, expires: number): Promise<OnCallPerson> {
    const email = p.email?.toLowerCase();
    const entry = this.#o.people.find((d) => (email && d.email?.toLowerCase() === email) || d.name.toLowerCase() === p.name.toLowerCase());
    const chat: Record<string, string> = { ...p.chat, ...entry?.chat };
    const address = p.email ?? entry?.email;
    if (address)
      for (const l of this.#o.lookups) {
        if (chat[l.surface]) continue;
        const id = await this.#idOf(l, address, expires);
        if (id) chat[l.surface] = id;
      }
    return { ...p, ...(address ? { email: address } : {}), chat };
  }

  async #idOf(l: ChatIdentityLookup, email: string, expires: number): Promise<string | undefined> {
    const key = `${l.surface}|${email.toLowerCase()}`;
    const known = this.#ids.get(key);
    if (known && known.expires > this.#o.clock.now().getTime()) return known.id;
    try {
      const id = await l.userIdByEmail(email);
      this.#keep(this.#ids, key, { id, expires });
      return id;
    } catch (err) {
      // Not kept: asked again with the next answer.
      this.#o.logger.warn({ err, surface: l.surface }, 'looking up the person on call by email failed; named as text');
      return undefined;
    }
  }

  #keep<V>(m: Map<string, V>, key: string, v: V): void {
    if (m.size >= MAX_CACHED) m.delete(m.keys().next().value!);
    m.delete(key);
    m.set(key, v);
  }
}

function seconds(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
