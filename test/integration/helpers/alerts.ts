/**
 * Alertmanager v4 payloads and a raw HTTP client for the webhook. The client is node:http,
 * not fetch: it must send bodies fetch refuses to (invalid UTF-8 with any content type, a
 * declared 2 MiB body the server rejects before reading) and still read the reply.
 */
import http from 'node:http';

export const CHECKOUT_ENTRY = 'incidents/checkout-api-oomkilled.md';
export const SAMPLE_POD = 'checkout-api-7d9f8c6b5-x2k4q';

export interface CrashLoopOptions {
  status: 'firing' | 'resolved';
  pod?: string;
  /** Alertmanager's fingerprint; default derived from the pod. */
  fingerprint?: string;
  severity?: string;
  startsAt?: string;
}

/** A KubePodCrashLooping webhook for a checkout-api pod in payments (the starter catalog's incident). */
export function crashLoopPayload(o: CrashLoopOptions): Record<string, unknown> {
  const pod = o.pod ?? SAMPLE_POD;
  const labels = {
    alertname: 'KubePodCrashLooping',
    namespace: 'payments',
    pod,
    container: 'checkout-api',
    cluster: 'prod-eu-1',
    severity: o.severity ?? 'warning',
  };
  const startsAt = o.startsAt ?? '2026-11-29T03:00:00Z';
  return {
    version: '4',
    groupKey: '{}:{alertname="KubePodCrashLooping"}',
    status: o.status,
    receiver: 'reprise',
    groupLabels: { alertname: 'KubePodCrashLooping' },
    commonLabels: labels,
    commonAnnotations: {},
    externalURL: 'http://alertmanager.monitoring:9093',
    truncatedAlerts: 0,
    alerts: [
      {
        status: o.status,
        labels,
        annotations: {
          summary: 'Pod is crash looping.',
          description: `Pod payments/${pod} (container checkout-api) is in waiting state (reason: "CrashLoopBackOff").`,
        },
        startsAt,
        endsAt: o.status === 'resolved' ? '2026-11-29T03:14:00Z' : '0001-01-01T00:00:00Z',
        generatorURL: 'http://prometheus-k8s.monitoring:9090/graph',
        fingerprint: o.fingerprint ?? `fp-${pod}`,
      },
    ],
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

/** Reads a response to the end; `json` is the parsed body, or undefined when it is not JSON. */
function collect(res: http.IncomingMessage, resolve: (r: RawResponse) => void, reject: (err: Error) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('error', reject);
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
  });
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs?: number;
}

/**
 * One request on a fresh connection. A write error after the server already answered (it may
 * close early on a body it refuses) does not fail the call: the answer is what we test.
 */
export function request(baseUrl: string, r: RawRequest): Promise<RawResponse> {
  const url = new URL(r.path, baseUrl);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(
      {
        method: r.method ?? 'POST',
        hostname: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: { connection: 'close', ...r.headers },
        agent: false,
      },
      (res) => {
        answered = true;
        collect(res, resolve, reject);
      },
    );
    req.setTimeout(r.timeoutMs ?? 15_000, () => req.destroy(new Error(`${r.method ?? 'POST'} ${r.path} timed out`)));
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.end(r.body);
  });
}

/** POST a JSON value to the Alertmanager webhook. */
export function postAlert(baseUrl: string, payload: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  return request(baseUrl, { path: '/webhook/alertmanager', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(payload) });
}

/** The 202 body of the webhook, as serve returns it. */
export interface WebhookAccepted {
  accepted: number;
  requestId: string;
  results: Array<{
    status: string;
    triggerKey: string;
    fingerprint?: string;
    threadId?: string | null;
    answer?: { kind: string; entry: string; confidence: number } | null;
  }>;
}

export interface OversizeRequest {
  path: string;
  headers: Record<string, string>;
  /** Bytes the body would have. */
  totalBytes: number;
  /**
   * `declared`: send `Content-Length: totalBytes` and no body bytes at all (the server must
   * refuse on the header alone). `chunked`: stream 64 KiB chunks until the server answers.
   */
  mode: 'declared' | 'chunked';
  /** Chunked: once more than this many bytes are out, wait up to a second for the answer after each chunk. Default half the total. */
  pauseAfterBytes?: number;
  timeoutMs?: number;
}

/**
 * Sends an oversized body the way a careful client does: it stops writing as soon as the
 * server has answered. A client still writing when the server closes gets EPIPE and, racing
 * it, may never see the 413 — a property of TCP clients, not of the server under test.
 */
export function requestOversize(baseUrl: string, r: OversizeRequest): Promise<RawResponse> {
  const url = new URL(r.path, baseUrl);
  const CHUNK = 64 * 1024;
  let onAnswer = (): void => {};
  const answer = new Promise<void>((a) => (onAnswer = a));
  return new Promise((resolve, reject) => {
    let answered = false;
    const headers = r.mode === 'declared' ? { ...r.headers, 'content-length': String(r.totalBytes) } : { ...r.headers, 'transfer-encoding': 'chunked' };
    const req = http.request(
      { method: 'POST', hostname: url.hostname, port: url.port, path: url.pathname, headers: { connection: 'close', ...headers }, agent: false },
      (res) => {
        answered = true;
        onAnswer();
        collect(
          res,
          (r) => {
            req.destroy();
            resolve(r);
          },
          reject,
        );
      },
    );
    req.setTimeout(r.timeoutMs ?? 15_000, () => req.destroy(new Error(`oversize ${r.mode} POST ${r.path} got no answer`)));
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    if (r.mode === 'declared') {
      req.flushHeaders();
      return;
    }
    const chunk = Buffer.alloc(CHUNK, 0x20);
    const pauseAfter = r.pauseAfterBytes ?? r.totalBytes / 2;
    void (async () => {
      for (let sent = 0; sent < r.totalBytes && !answered && !req.destroyed;) {
        await new Promise<void>((done) => req.write(chunk, () => done()));
        sent += CHUNK;
        // Give the server time to answer before writing more: it refuses once past its limit.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([answer, new Promise<void>((w) => (timer = setTimeout(w, sent > pauseAfter ? 1000 : 1)))]);
        clearTimeout(timer);
      }
      if (!answered && !req.destroyed) req.end();
    })();
  });
}

/** A firing in a namespace of its own (`<prefix>-<n>`), in its own Alertmanager group: one trigger, one thread each. */
export function ownGroupAlert(n: number, prefix = 'crash'): Record<string, unknown> {
  const p = crashLoopPayload({ status: 'firing', pod: `api-7d9f8c6b5-x2k4${'bcdfghjk'[n % 8]}` }) as {
    groupKey: string;
    alerts: Array<{ labels: Record<string, string>; fingerprint?: string }>;
  };
  p.groupKey = `{}:{namespace="${prefix}-${n}"}`;
  for (const a of p.alerts) {
    a.labels = { ...a.labels, namespace: `${prefix}-${n}` };
    a.fingerprint = `${prefix}-${n}`;
  }
  return p;
}
