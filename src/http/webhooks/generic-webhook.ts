/**
 * `POST /webhook/generic/<name>` (SPEC §4): a sender's JSON mapped by dot-paths in config. A
 * source with `hmac_secret` signs its body (hex HMAC-SHA256 in `hmac_header`) instead of
 * sending the bearer token; its body is read in the verify pool after a cheap early check of
 * the header.
 *
 * Replay protection (issue 20 item 4), when the source sets `timestamp_header`: the sender signs
 * `<timestamp>.<raw body>` and sends the Unix time (seconds) in that header; a timestamp further
 * than the source's `replay_window` from now is refused before the body is read, and an
 * identical signed delivery (same timestamp and body) inside the window is acknowledged and
 * ignored. Without `timestamp_header` (issue 29 deliverable 8) the body is all there is: a
 * signed body already accepted inside `replay_window` is acknowledged and ignored, by its
 * digest, unless the operator turned that off (`replay_by_digest: false`) for a sender that
 * re-sends identical bodies on purpose.
 */
import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import { RepriseError } from '../../core/errors.js';
import { parseGenericPayload, verifyGenericSignature, type GenericMapping } from '../../core/generic-source.js';
import type { HttpContext, HttpEnv } from '../http-app.js';
import { decodeUtf8, parseJson } from '../read-body.js';
import { staleReason } from './freshness.js';
import type { WebhookKit } from './webhook-kit.js';

/** One configured generic source: its mapping and, optionally, its signature and replay settings. */
export type GenericSource = GenericMapping & {
  hmac_secret?: string | undefined;
  hmac_header: string;
  timestamp_header?: string | undefined;
  /** Window of `timestamp_header`, or how long an accepted body is remembered without one (ms); default 5 min. */
  replay_window_ms?: number;
  /** Without `timestamp_header`: remember accepted bodies by digest (default true). */
  replay_by_digest?: boolean;
};

const DEFAULT_WINDOW_MS = 5 * 60_000;
const SIGNATURE = /^(?:sha256=)?[0-9a-f]{64}$/i;

export function genericWebhook(kit: WebhookKit, sources: Record<string, GenericSource>): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const sourceOf = (c: HttpContext): { name: string; source: GenericSource } => {
    const name = c.req.param('name') ?? '';
    if (!Object.prototype.hasOwnProperty.call(sources, name))
      throw new RepriseError('not_found', `no generic webhook source named ${name.slice(0, 64)} (configure server.generic_webhooks)`);
    return { name, source: sources[name]! };
  };
  const windowOf = (source: GenericSource): number => source.replay_window_ms ?? DEFAULT_WINDOW_MS;

  app.post(
    '/:name',
    async (c, next) => {
      const { name, source } = sourceOf(c);
      // A source without a secret sends the bearer token, checked before its body is read.
      if (!source.hmac_secret) return kit.guard(c, next);
      // Verify early: what can be checked without the body is checked before it takes a slot.
      const signature = c.req.header(source.hmac_header);
      if (!signature || signature.trim() === '') throw new RepriseError('unauthorized', `missing ${source.hmac_header} header`);
      if (!SIGNATURE.test(signature.trim())) throw new RepriseError('unauthorized', `${source.hmac_header} is not a hex HMAC-SHA256`);
      if (source.timestamp_header) {
        const stale = staleReason(
          source.timestamp_header,
          c.req.header(source.timestamp_header),
          kit.clock.now().getTime(),
          windowOf(source),
          `server.generic_webhooks.${name}.replay_window`,
        );
        if (stale) throw new RepriseError('unauthorized', `generic webhook ${name} refused: ${stale}`);
      }
      await next();
      return undefined;
    },
    kit.jsonOnly,
    kit.timed('generic', async (c) => {
      const { name, source } = sourceOf(c);
      const label = `generic:${name}`;
      const raw = await kit.readBody(c, 'generic', { unverified: source.hmac_secret !== undefined });
      const parse = async () => {
        const batch = await parseGenericPayload(parseJson(decodeUtf8(raw)), source, { ...kit.parseOptions(), source: label });
        return { incidents: batch.incidents, truncated: batch.truncated, skipped: batch.skipped, refusedLinks: batch.refusedLinks };
      };
      if (!source.hmac_secret) return kit.ingest(c, label, await parse());
      const timestamp = source.timestamp_header ? c.req.header(source.timestamp_header)!.trim() : undefined;
      const check = verifyGenericSignature(source.hmac_secret, raw, c.req.header(source.hmac_header), source.hmac_header, timestamp);
      if (!check.ok) throw new RepriseError('unauthorized', check.reason);
      const parsed = await parse();
      const byDigest = timestamp === undefined && source.replay_by_digest !== false;
      if ((timestamp === undefined && !byDigest) || parsed.incidents.length === 0) return kit.ingest(c, label, parsed);
      // A stamped delivery is its signature (timestamp and body), kept while the timestamp could
      // pass (either side of now); an unstamped one is its body, kept for the window.
      const id =
        timestamp !== undefined
          ? c.req
              .header(source.hmac_header)!
              .trim()
              .replace(/^sha256=/i, '')
              .toLowerCase()
          : `body:${createHash('sha256').update(raw).digest('hex')}`;
      const claim = await kit.replay.claim(label, id, timestamp !== undefined ? windowOf(source) * 2 : windowOf(source));
      if (claim.kind === 'seen')
        return kit.ingest(c, label, {
          incidents: [],
          truncated: [],
          ignored: `duplicate delivery: this signed body was already accepted at ${claim.at}${timestamp === undefined ? ` (identical bodies are ignored for server.generic_webhooks.${name}.replay_window)` : ''}`,
        });
      try {
        const res = await kit.ingest(c, label, parsed);
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
