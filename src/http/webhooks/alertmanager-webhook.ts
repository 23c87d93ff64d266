/**
 * `POST /webhook/alertmanager` and `POST /webhook/grafana` (SPEC §4): Alertmanager's v4 payload,
 * which Grafana's unified alerting also sends (plus orgId, state, title…). Behind the bearer
 * token (checked before a byte of the body is read), JSON only, bounded.
 */
import { Hono } from 'hono';
import { parseAlertmanagerPayloadYielding } from '../../core/alertmanager.js';
import { parseGrafanaPayloadYielding, type GrafanaBatch } from '../../core/grafana.js';
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
      const body = parseJson(decodeUtf8(raw));
      const batch: GrafanaBatch =
        source === 'grafana' ? await parseGrafanaPayloadYielding(body, kit.parseOptions()) : await parseAlertmanagerPayloadYielding(body, kit.parseOptions());
      const context = { groupKey: batch.groupKey, receiver: batch.receiver, truncatedAlerts: batch.group?.truncatedAlerts };
      // Grafana's contact-point test: answered 202 with the reason, recorded nowhere.
      if (batch.test)
        return kit.ingest(c, source, { incidents: [], truncated: [], ignored: batch.test.reason, context: { ...context, receiver: batch.test.receiver } });
      return kit.ingest(c, source, {
        incidents: batch.incidents,
        truncated: batch.truncated,
        skipped: batch.skipped,
        refusedLinks: batch.refusedLinks,
        context,
      });
    }),
  );
  return app;
}
