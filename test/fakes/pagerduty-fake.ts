/**
 * A PagerDuty REST API v2 stand-in on 127.0.0.1, port 0: `PUT /incidents/{id}` (status
 * acknowledged) checked as PagerDuty checks it — `Authorization: Token token=…`, a `From` header,
 * the v2 Accept header, a JSON incident reference — with scripted failures (status codes,
 * Retry-After). Records every request, so tests assert on the wire. With `echo`, a refusal quotes
 * the request's headers back in its error body, as some proxies and API gateways do (issue 29:
 * the token must not travel on from there).
 */
import { createServer, type Server } from 'node:http';

export interface PagerDutyRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** What the stand-in answered. */
  status: number;
}

/** A scripted answer for the n-th request (0-based); undefined = the normal one. */
export type PagerDutyScript = (n: number) => { status: number; retryAfter?: string; message?: string } | undefined;

export interface PagerDutyFake {
  apiUrl: string;
  requests: PagerDutyRequest[];
  /** Incident ids acknowledged (each successful acknowledge, in order). */
  acknowledged: string[];
  script(s: PagerDutyScript): void;
  close(): Promise<void>;
}

/** Who `GET /oncalls` says is on call for an escalation policy (issue 32): as PagerDuty lists them. */
export interface PagerDutyOnCall {
  escalation_level: number;
  user: { id: string; name: string; email?: string };
  /** End of the shift (ISO), or null for an always-on layer. */
  end: string | null;
}

export interface PagerDutyFakeOptions {
  token: string;
  incidents?: string[];
  echo?: boolean;
  /** Escalation policy id → its on-calls (`GET /oncalls?escalation_policy_ids[]=…`). */
  oncalls?: Record<string, PagerDutyOnCall[]>;
  /** Service id → its escalation policy id (`GET /services/{id}`). */
  services?: Record<string, string>;
  /** Resolved incidents, their notes and log entries (`reprise import pagerduty`; the block at the end of this file). */
  history?: PagerDutyHistorySeed;
}

export async function startPagerDutyFake(opts: PagerDutyFakeOptions = { token: 'pd-token' }): Promise<PagerDutyFake> {
  const known = opts.incidents ? new Set(opts.incidents) : undefined;
  const requests: PagerDutyRequest[] = [];
  const acknowledged: string[] = [];
  let script: PagerDutyScript = () => undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        body = raw;
      }
      const rec: PagerDutyRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, status: 0 };
      requests.push(rec);
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
        rec.status = status;
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
      };
      const echoed = opts.echo ? ` (request: Authorization: ${String(req.headers['authorization'])}; headers ${JSON.stringify(req.headers)})` : '';
      const error = (status: number, message: string, errors: string[] = []) =>
        send(status, { error: { message: status >= 400 ? `${message}${echoed}` : message, code: status, errors } });
      const scripted = script(requests.length - 1);
      if (scripted) {
        send(
          scripted.status,
          { error: { message: scripted.message ?? `scripted ${scripted.status}` } },
          scripted.retryAfter ? { 'retry-after': scripted.retryAfter } : {},
        );
        return;
      }
      if (req.method === 'GET' && opts.history) {
        if (req.headers['authorization'] !== `Token token=${opts.token}`) return error(401, 'Unauthorized');
        const answer = historyRoute(opts.history, new URL(req.url ?? '/', 'http://pd.invalid'));
        if (answer) return send(answer.status, answer.body);
      }
      if (req.method === 'GET') return onGet(req.url ?? '', req.headers, send, error);
      const m = /^\/incidents\/([^/?]+)$/.exec(req.url ?? '');
      if (!m || req.method !== 'PUT') return error(404, 'Not Found');
      if (req.headers['authorization'] !== `Token token=${opts.token}`) return error(401, 'Unauthorized');
      if (!String(req.headers['accept'] ?? '').includes('application/vnd.pagerduty+json;version=2')) return error(406, 'Not Acceptable');
      const from = req.headers['from'];
      if (typeof from !== 'string' || !from.includes('@')) return error(400, 'Invalid Input Provided', ['A valid user must be provided in the From header.']);
      const id = decodeURIComponent(m[1]!);
      if (known && !known.has(id)) return error(404, 'Incident Not Found');
      const inc = (body as { incident?: { type?: unknown; status?: unknown } } | undefined)?.incident;
      if (inc?.type !== 'incident_reference' || (inc.status !== 'acknowledged' && inc.status !== 'resolved'))
        return error(400, 'Invalid Input Provided', ['incident must be an incident_reference with a status']);
      if (inc.status === 'acknowledged') acknowledged.push(id);
      send(200, { incident: { id, type: 'incident', status: inc.status } });
    });
  });
  // GET /oncalls and /services/{id}, checked as PagerDuty checks them (token, v2 Accept).
  function onGet(
    url: string,
    headers: Record<string, string | string[] | undefined>,
    send: (status: number, payload: unknown) => void,
    error: (status: number, message: string) => void,
  ): void {
    if (headers['authorization'] !== `Token token=${opts.token}`) return error(401, 'Unauthorized');
    if (!String(headers['accept'] ?? '').includes('application/vnd.pagerduty+json;version=2')) return error(406, 'Not Acceptable');
    const u = new URL(url, 'http://pd');
    const svc = /^\/services\/([^/]+)$/.exec(u.pathname);
    if (svc) {
      const policy = opts.services?.[decodeURIComponent(svc[1]!)];
      if (!policy) return error(404, 'Service Not Found');
      return send(200, { service: { id: svc[1], type: 'service', escalation_policy: { id: policy, type: 'escalation_policy_reference' } } });
    }
    if (u.pathname !== '/oncalls') return error(404, 'Not Found');
    const policies = u.searchParams.getAll('escalation_policy_ids[]');
    const users = u.searchParams.getAll('include[]').includes('users');
    const list = policies.flatMap((p) => (opts.oncalls?.[p] ?? []).map((o) => ({ ...o, escalation_policy: { id: p } })));
    // `earliest=true`: one entry per user and level (the earliest shift); without users included, references only.
    send(200, {
      oncalls: list.map((o) => ({
        ...o,
        user: users ? { ...o.user, type: 'user', summary: o.user.name } : { id: o.user.id, type: 'user_reference', summary: o.user.name },
      })),
      limit: 25,
      offset: 0,
      more: false,
    });
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the PagerDuty stand-in did not get a port');
  return {
    apiUrl: `http://127.0.0.1:${address.port}`,
    requests,
    acknowledged,
    script: (s) => void (script = s),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---------------------------------------------------------------------------------------------
// Incident history (`reprise import pagerduty`, issue 31 item 3): GET /incidents (resolved, in a
// window, by service, paginated offset/limit/more), GET /incidents/{id}/notes and
// GET /incidents/{id}/log_entries. The same auth and scripted failures as above apply.
// ---------------------------------------------------------------------------------------------

export interface PagerDutyHistorySeed {
  /** Incident objects as PagerDuty's REST API returns them (`id`, `title`, `status`, `created_at`, `service`…). */
  incidents: Array<Record<string, unknown>>;
  /** Notes per incident id, as `{ content, created_at, user: { id, summary } }`. */
  notes?: Record<string, unknown[]>;
  /** Log entries per incident id (`type: resolve_log_entry`, `channel`, `agent`…). */
  logEntries?: Record<string, unknown[]>;
  /** The page size the stand-in caps `limit` at (PagerDuty: 100); small to exercise paging. */
  maxLimit?: number;
}

function historyRoute(h: PagerDutyHistorySeed, url: URL): { status: number; body: unknown } | undefined {
  const q = url.searchParams;
  if (url.pathname === '/incidents') {
    const since = Date.parse(q.get('since') ?? '');
    const until = Date.parse(q.get('until') ?? '');
    if (Number.isNaN(since) || Number.isNaN(until))
      return { status: 400, body: { error: { message: 'Invalid Input Provided', errors: ['since and until are required'] } } };
    const statuses = q.getAll('statuses[]');
    const services = q.getAll('service_ids[]');
    const limit = Math.min(Number(q.get('limit') ?? 25), h.maxLimit ?? 100);
    const offset = Number(q.get('offset') ?? 0);
    const all = h.incidents
      .filter((i) => statuses.length === 0 || statuses.includes(String(i['status'])))
      .filter((i) => services.length === 0 || services.includes(String((i['service'] as { id?: string } | undefined)?.id)))
      .filter((i) => {
        const at = Date.parse(String(i['created_at']));
        return at >= since && at < until;
      })
      .sort((a, b) => Date.parse(String(a['created_at'])) - Date.parse(String(b['created_at'])));
    const page = all.slice(offset, offset + limit);
    return { status: 200, body: { incidents: page, limit, offset, more: offset + page.length < all.length, total: null } };
  }
  const m = /^\/incidents\/([^/]+)\/(notes|log_entries)$/.exec(url.pathname);
  if (!m) return undefined;
  const id = decodeURIComponent(m[1]!);
  if (!h.incidents.some((i) => i['id'] === id)) return { status: 404, body: { error: { message: 'Incident Not Found' } } };
  if (m[2] === 'notes') return { status: 200, body: { notes: h.notes?.[id] ?? [] } };
  return { status: 200, body: { log_entries: h.logEntries?.[id] ?? [], limit: 100, offset: 0, more: false } };
}
