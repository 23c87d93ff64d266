/**
 * A Grafana OnCall API stand-in on 127.0.0.1, port 0 (issue 32): `GET /api/v1/schedules/{id}/`
 * with `on_call_now`, `GET /api/v1/users/{id}/`, checked as OnCall checks them (the token as the
 * whole `Authorization` header). Records every request; `script` answers one with a status.
 */
import { createServer, type Server } from 'node:http';

export interface GrafanaOnCallFake {
  apiUrl: string;
  requests: Array<{ method: string; path: string; status: number }>;
  /** Who the schedule has on call now (changed by tests between lookups). */
  setOnCall(schedule: string, userIds: string[]): void;
  script(s: (n: number) => number | undefined): void;
  close(): Promise<void>;
}

export async function startGrafanaOnCallFake(opts: {
  token: string;
  users: Record<string, { name?: string; username: string; email?: string }>;
  schedules: Record<string, string[]>;
}): Promise<GrafanaOnCallFake> {
  const requests: GrafanaOnCallFake['requests'] = [];
  const schedules = { ...opts.schedules };
  let script: (n: number) => number | undefined = () => undefined;
  const server: Server = createServer((req, res) => {
    const rec = { method: req.method ?? '', path: req.url ?? '', status: 0 };
    requests.push(rec);
    const send = (status: number, body: unknown): void => {
      rec.status = status;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const scripted = script(requests.length - 1);
    if (scripted) return send(scripted, { detail: `scripted ${scripted}` });
    if (req.headers['authorization'] !== opts.token) return send(401, { detail: 'Invalid token.' });
    if (req.method !== 'GET') return send(405, { detail: 'Method not allowed.' });
    const sched = /^\/api\/v1\/schedules\/([^/]+)\/$/.exec(req.url ?? '');
    if (sched) {
      const id = decodeURIComponent(sched[1]!);
      const now = schedules[id];
      if (!now) return send(404, { detail: 'Not found.' });
      return send(200, { id, name: `schedule ${id}`, type: 'web', time_zone: 'UTC', on_call_now: now, shifts: [] });
    }
    const user = /^\/api\/v1\/users\/([^/]+)\/$/.exec(req.url ?? '');
    if (user) {
      const id = decodeURIComponent(user[1]!);
      const u = opts.users[id];
      if (!u) return send(404, { detail: 'Not found.' });
      return send(200, { id, ...u, role: 'user', timezone: null, teams: [] });
    }
    send(404, { detail: 'Not found.' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the Grafana OnCall stand-in did not get a port');
  return {
    apiUrl: `http://127.0.0.1:${address.port}`,
    requests,
    setOnCall: (schedule, ids) => void (schedules[schedule] = ids),
    script: (s) => void (script = s),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
