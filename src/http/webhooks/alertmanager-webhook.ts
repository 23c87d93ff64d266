/**
 * `POST /webhook/alertmanager` and `POST /webhook/grafana` (SPEC §4): Alertmanager's v4 payload,
 * which Grafana's unified alerting also sends (plus orgId, state, title…). Behind the bearer
 * token (checked before a byte of the body is read), JSON only, bounded.
 */
import { Hono } from 'hono';
import { parseAlertmanagerPayloadYielding } from '../../core/alertmanager.js';
import type { HttpEnv } from '../http-app.js';
import { decodeUtf8, parseJson } from '../read-body.js';
import type { WebhookKit } from './webhook-kit.js';

export function alertmanagerWebhook(kit: WebhookKit, source: 'alertmanager' | 'grafana'): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.post(
    '/',
    kit.guard,
    kit.jsonOnly,
    kit.timed(source, async (c) => {
      const raw = await kit.readBody(c, source);
      const batch = await parseAlertmanagerPayloadYielding(parseJson(decodeUtf8(raw)), { ...kit.parseOptions(), source });
      return kit.ingest(c, source, {
        incidents: batch.incidents,
        truncated: batch.truncated,
        skipped: batch.skipped,
        context: { groupKey: batch.groupKey, receiver: batch.receiver },
      });
    }),
  );
  return app;
}
