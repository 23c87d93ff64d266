import type { Incident } from '../types.js';
import { compileRule, type TriggerRule } from './trigger-policy.js';

/** One configured surface, as routing sees it. */
export interface RoutedTransport {
  name: string;
  /** Channel / room used when no rule and no webhook parameter says otherwise. */
  defaultChannel: string;
  /** The webhook query parameter that names a channel on this surface (`channel`, `room`). */
  param: string;
}

/** First rule whose matchers all match wins; it names a channel per surface. */
export interface RouteRule {
  match: TriggerRule;
  channels: Record<string, string>;
  /** Ask "what fixed it?" on resolve for incidents of this rule (absent: the `fixes.ask` setting). */
  askFix?: boolean;
}

/** Owners to ping on critical firings: user / group ids per surface. */
export interface MentionRule {
  match: TriggerRule;
  ids: Record<string, string[]>;
}

export interface RoutingOptions {
  transports: readonly RoutedTransport[];
  rules: readonly RouteRule[];
  mentions: readonly MentionRule[];
}

/** Webhook query parameters (`?channel=…&room=…`): Alertmanager's own routing tree decides. */
export type RouteHint = Record<string, string | undefined>;

/**
 * Where an incident goes and whom it pings (SPEC §9 routing): a webhook parameter wins, then
 * the first matching rule, then the surface's default. Every later message about the incident
 * follows its thread, so routing is decided once, at the open.
 */
export class Routing {
  readonly #transports: readonly RoutedTransport[];
  readonly #rules: Array<{ test: (i: Incident) => boolean; channels: Record<string, string>; askFix?: boolean }>;
  readonly #mentions: Array<{ test: (i: Incident) => boolean; ids: Record<string, string[]> }>;

  constructor(opts: RoutingOptions) {
    this.#transports = opts.transports;
    this.#rules = opts.rules.map((r) => ({ test: compileRule(r.match), channels: r.channels, ...(r.askFix !== undefined ? { askFix: r.askFix } : {}) }));
    this.#mentions = opts.mentions.map((m) => ({ test: compileRule(m.match), ids: m.ids }));
  }

  get transports(): readonly RoutedTransport[] {
    return this.#transports;
  }

  /** The channel per surface for a new incident. */
  destinations(incident: Incident, hint: RouteHint = {}): Array<{ transport: string; channel: string }> {
    const rule = this.#rules.find((r) => r.test(incident));
    return this.#transports.map((t) => ({ transport: t.name, channel: hint[t.param] || rule?.channels[t.name] || t.defaultChannel }));
  }

  /**
   * The channels (rooms) configured for a surface: its default and every routing rule's. Commands
   * act only there (issue 29 item 3); undefined for a surface routing does not know (the CLI).
   */
  configuredChannels(transport: string): string[] | undefined {
    const t = this.#transports.find((x) => x.name === transport);
    if (!t) return undefined;
    const out = new Set([t.defaultChannel]);
    for (const r of this.#rules) if (r.channels[transport]) out.add(r.channels[transport]);
    return [...out];
  }

  /** Whether the first rule matching the incident says to ask "what fixed it?" (undefined: it does not say). */
  askFix(incident: Incident): boolean | undefined {
    return this.#rules.find((r) => r.test(incident))?.askFix;
  }

  /** Ids to ping on this surface: critical firings only, never anything else. */
  mentions(incident: Incident, transport: string): string[] {
    if (incident.status !== 'firing' || incident.severity !== 'critical') return [];
    const ids = new Set<string>();
    for (const m of this.#mentions) if (m.test(incident)) for (const id of m.ids[transport] ?? []) ids.add(id);
    return [...ids];
  }
}
