/**
 * `POST /webhook/pagerduty` (SPEC §4): PagerDuty V3 webhooks, signed (`X-PagerDuty-Signature`,
 * HMAC-SHA256 of the raw body) instead of carrying the bearer token; refused outright while no
 * secret is set. The signature needs the body, so the body is read in the verify pool after a
 * cheap early check of the header (no well-formed `v1=` signature → 401 before reading a byte).
 *
 * Replay protection (issue 20 item 4): an event whose `occurred_at` is further than
 * `server.replay_window` from now is refused (400, with the reason); an event id already
 * accepted is acknowledged (202) and ignored; PagerDuty's redelivery of a delivery we did not
 * accept (same id) is handled, once. See replay-guard.ts.
 */
import { Hono } from 'hono';
import { RepriseError } from '../../core/errors.js';
import type { Actor, ChatIntent } from '../../core/chat/chat-types.js';
import { parsePagerDutyPayload, verifyPagerDutySignature, type PagerDutyParse } from '../../core/pagerduty.js';
import type { HttpEnv } from '../http-app.js';
import { decodeUtf8, parseJson } from '../read-body.js';
import { staleReason } from './freshness.js';
import type { WebhookKit } from './webhook-kit.js';

const SIGNATURE = /(?:^|,)\s*v1=[0-9a-f]{64}\s*(?:,|$)/i;

export interface PagerDutyWebhookOptions {
  /** Without it every request is refused (never open). */
  secret: string | undefined;
  /** Events further than this from now (by `occurred_at`) are refused; accepted ids are remembered this long. */
  replayWindowMs: number;
}

/**
 * `incident.acknowledged` / `.annotated` as what the PagerDuty user meant: an ack or an operator
 * note on the alert's thread (found by its fingerprint, the incident id), as text like any note.
 */
export function pagerDutyIntent(p: Extract<PagerDutyParse, { kind: 'ack' | 'note' }>, eventId: string): ChatIntent {
  const actor: Actor = { id: p.agent?.id ?? 'pagerduty', ...(p.agent?.name ? { name: p.agent.name } : {}), via: 'pagerduty' };
  const target = { fingerprint: `pagerduty:${p.incidentId}` };
  const id = `pagerduty:${eventId}`;
  return p.kind === 'ack' ? { type: 'ack', eventId: id, actor, target } : { type: 'note', eventId: id, actor, text: p.text, target };
}

export function pagerDutyWebhook(kit: WebhookKit, opts: PagerDutyWebhookOptions): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const { secret } = opts;
  app.post(
    '/',
    async (c, next) => {
      if (!secret)
        throw new RepriseError(
          'unauthorized',
          'PagerDuty webhook disabled: no signing secret configured (set REPRISE_PAGERDUTY_SECRET or server.pagerduty_secret)',
        );
      // Verify early: a request that cannot be signed is refused before its body takes a slot.
      const header = c.req.header('x-pagerduty-signature');
      if (!header || header.trim() === '') throw new RepriseError('unauthorized', 'missing X-PagerDuty-Signature header');
      if (!SIGNATURE.test(header)) throw new RepriseError('unauthorized', 'X-PagerDuty-Signature has no v1 signature');
      await next();
    },
    kit.jsonOnly,
    kit.timed('pagerduty', async (c) => {
      const raw = await kit.readBody(c, 'pagerduty', { unverified: true });
      const check = verifyPagerDutySignature(secret!, raw, c.req.header('x-pagerduty-signature'));
      if (!check.ok) throw new RepriseError('unauthorized', check.reason);
      const p = parsePagerDutyPayload(parseJson(decodeUtf8(raw)), kit.parseOptions());
      const context = { eventType: p.eventType, eventId: p.eventId };
      const stale = staleReason('event.occurred_at', p.occurredAt, kit.clock.now().getTime(), opts.replayWindowMs, 'server.replay_window');
      if (stale) throw new RepriseError('bad_request', `PagerDuty event refused: ${stale}`);
      if (p.kind === 'ignored') return kit.ingest(c, 'pagerduty', { incidents: [], truncated: [], ignored: p.reason, context });
      if ((p.kind === 'ack' || p.kind === 'note') && !kit.chat)
        return kit.ingest(c, 'pagerduty', { incidents: [], truncated: [], ignored: `${p.eventType} is not handled by this server`, context });
      if (!p.eventId) throw new RepriseError('bad_request', 'PagerDuty event refused: event.id is required (replay protection)');
      const claim = await kit.replay.claim('pagerduty', p.eventId, opts.replayWindowMs * 2);
      if (claim.kind === 'seen') {
        return kit.ingest(c, 'pagerduty', {
          incidents: [],
          truncated: [],
          ignored: `duplicate delivery: event ${p.eventId.slice(0, 100)} was already accepted at ${claim.at}`,
          context,
        });
      }
      try {
        const res =
          p.kind === 'incident'
            ? await kit.ingest(c, 'pagerduty', {
                incidents: [p.incident],
                truncated: [],
                context,
                refusedLinks: (p.incident.refusedLinks ?? []).map((r) => ({ alert: 0, ...r })),
              })
            : await kit.chat!(c, 'pagerduty', [pagerDutyIntent(p, p.eventId)], context);
        await claim.accepted();
        return res;
      } catch (err) {
        await claim.failed();
        throw err;
      }
    }),
  );
  return app;
}
