/**
 * The control socket's API (`reprise feedback|note|fixed|ack|postmortem|status|catalog sync|curate`
 * against a running bot): each write is an intent pushed into the loop's inbox, like every other
 * entrance, and answered with what was recorded — or `{}` while it waits for the leader.
 */
import { ackRequest, feedbackIntent, noteRequest, recordedOrThrow } from '../core/bot/feedback-request.js';
import { ackIntent, fixedIntent, noteIntent, postmortemIntent } from '../core/bot/intent.js';
import type { Inbox, Intake } from '../core/inbox/inbox.js';
import type { Ledger } from '../core/ledger/ledger.js';
import type { ControlHandlers } from '../http/control-server.js';
import type { Readiness } from '../http/readiness.js';
import type { Clock } from '../ports/clock.js';
import { RepriseError } from '../core/errors.js';
import { answerSessions, type UiSessions } from '../http/ui/ui-sessions.js';
import type { ServeCuration } from './serve-curation.js';
import type { ServedCatalog } from './served-catalog.js';

/** The one outcome of a control request, or why it was not recorded; `{}` while queued for the leader. */
function recordedOf(o: Intake | undefined, what: string): ReturnType<typeof recordedOrThrow> | Record<string, never> {
  if (o?.status === 'queued') return {};
  return recordedOrThrow(o, what);
}

/** What the control socket answers, over the running bot's inbox, ledger and catalog. */
export function controlApi(deps: {
  inbox: Pick<Inbox, 'push' | 'status'>;
  ledger: Pick<Ledger, 'read' | 'seq'>;
  clock: Clock;
  served: Pick<ServedCatalog, 'syncNow'>;
  grooming: Pick<ServeCuration, 'run'>;
  uiSessions: UiSessions;
  readiness: () => Readiness;
  /** The HTTP port, for `status`. */
  port: number;
}): ControlHandlers {
  const { inbox, ledger, clock } = deps;
  const one = async (intent: Parameters<Inbox['push']>[0][number], what: string) => recordedOf((await inbox.push([intent]))[0], what);
  return {
    // The socket is the CLI's channel: whatever the body says, it came through the CLI.
    feedback: async (body) => {
      const o = await one(feedbackIntent(ledger, { ...(typeof body === 'object' && body !== null ? body : {}), via: 'cli' }, clock.now()), 'feedback');
      return { seq: o.seq, event: o.event };
    },
    status: async () => ({ pid: process.pid, port: deps.port, seq: ledger.seq, readiness: deps.readiness(), replica: inbox.status() }),
    note: async (body) => {
      const o = await one(noteIntent(noteRequest(body)), 'note');
      return { seq: o.seq, outcome: o };
    },
    fixed: async (body) => {
      const o = await one(fixedIntent(noteRequest(body)), 'fix');
      return { seq: o.seq, outcome: o };
    },
    ack: async (body) => {
      const o = await one(ackIntent(ackRequest(body)), 'ack');
      return { seq: o.seq, outcome: o };
    },
    // The outcome carries the draft when no forge is configured: the CLI prints it.
    postmortem: async (body) => {
      const o = await one(postmortemIntent(ackRequest(body)), 'postmortem');
      const { draft } = o as { draft?: { path: string; content: string } };
      return { seq: o.seq, event: o.event, ...(draft ? { draft: { path: draft.path, content: draft.content } } : {}) };
    },
    catalogSync: () => deps.served.syncNow(),
    uiSessions: async (body) => {
      try {
        return await answerSessions(deps.uiSessions, body, clock.now());
      } catch (err) {
        // A session id that names none (or several) is the caller's to fix: said, not a 500.
        throw new RepriseError('invalid_payload', (err as Error).message);
      }
    },
    curate: async (body) => deps.grooming.run(typeof body === 'object' && body !== null && (body as { apply?: unknown }).apply === true),
  };
}
