/**
 * Who is on call (issue 32 item 2): one question — who holds the pager for this route (or this
 * incident's service) right now, and until when — answered by a provider (PagerDuty `/oncalls`,
 * Grafana OnCall / IRM, or the rotation in config), and each person's id on each chat surface.
 * Types only: core decides with an answer it is handed, runtime asks the providers.
 */

/** One person on call, with the ids each chat surface mentions them by (`slack`: `U…`, `matrix`: `@ann:hs`). */
export interface OnCallPerson {
  name: string;
  email?: string;
  /** Surface name → that surface's user id; a surface without one names the person as text. */
  chat: Record<string, string>;
}

/** What was asked: the on-call route (its name in `oncall.routes`, or `default`) and, when the incident says, its PagerDuty service. */
export interface OnCallQuery {
  route: string;
  /** The PagerDuty service id of the incident (its escalation policy is whose pager rings). */
  service?: string;
}

/**
 * The answer: the people on call (first escalation level first) until a time, and where it came
 * from (`rotation`, `pagerduty`, `grafana`) — or unknown, with why, in words a person reads on
 * the card ("PagerDuty did not answer within 1.5 s").
 */
export type OnCallAnswer = { known: true; people: OnCallPerson[]; until?: string; source: string } | { known: false; reason: string; source: string };

/** A provider of {@link OnCallAnswer}s. Never throws for a provider's failure: it answers unknown-with-reason. */
export interface OnCallProvider {
  /** `rotation`, `pagerduty`, `grafana`: named on the card. */
  readonly source: string;
  whoIsOnCall(query: OnCallQuery, now: Date, signal?: AbortSignal): Promise<OnCallAnswer>;
}

/**
 * A chat surface's way from an email to its user id (Slack `users.lookupByEmail`, Mattermost
 * `GET /users/email/{email}`). Resolves undefined when the surface knows no such user; rejects
 * when it could not be asked (asked again with the next answer). A chat transport offers it by
 * having a `userIdByEmail(email)` method (runtime/build-oncall.ts finds it, named by the
 * transport's `name`): a surface adapter needs nothing else to have its people mentioned.
 */
export interface ChatIdentityLookup {
  /** The surface (transport) name the ids are for. */
  readonly surface: string;
  userIdByEmail(email: string): Promise<string | undefined>;
}
