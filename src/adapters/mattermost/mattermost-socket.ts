/**
 * Mattermost's WebSocket (`/api/v4/websocket`) with `ws`: authenticates with an
 * `authentication_challenge` carrying the token (no header, no cookie), hands each event on in
 * order, and reconnects with backoff (core/backoff) whenever the connection drops or goes quiet.
 * After every `hello` (a first connection, a reconnection) and after a gap in the server's `seq`
 * numbers, `onConnected` runs: the transport catches up through REST what it may have missed.
 */
import WebSocket from 'ws';
import { backoffDelay } from '../../core/backoff.js';
import type { Logger } from '../../ports/logger.js';

export interface SocketEvent {
  event: string;
  data?: Record<string, unknown>;
  broadcast?: { channel_id?: string; user_id?: string };
  seq?: number;
}

export interface MattermostSocketOptions {
  url: string;
  token: string;
  logger: Logger;
  /** Reconnect delays: doubling from `initialMs` to `maxMs`. */
  backoff: { initialMs: number; maxMs: number };
  /** A connection silent this long (no event, no pong) is dropped and made again. Default 60 s. */
  idleMs?: number;
  onEvent(e: SocketEvent): void;
  /** After `hello`, or after events were missed (`gap`): time to catch up. */
  onConnected(why: 'first' | 'reconnect' | 'gap'): void;
  /** The token was refused (the socket closed before `hello` with an auth error). */
  onRejected?(why: string): void;
}

export class MattermostSocket {
  readonly #opts: MattermostSocketOptions;
  #ws: WebSocket | undefined;
  #failures = 0;
  #connectedOnce = false;
  #expectSeq = 0;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  #idle: NodeJS.Timeout | undefined;
  #lastHeard = 0;

  constructor(opts: MattermostSocketOptions) {
    this.#opts = opts;
  }

  /** True between a `hello` and the next drop. */
  connected = false;

  start(): void {
    this.#connect();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearInterval(this.#idle);
    this.#ws?.terminate();
  }

  #connect(): void {
    if (this.#closed) return;
    const log = this.#opts.logger;
    const ws = new WebSocket(this.#opts.url, { handshakeTimeout: 10_000, maxPayload: 4 * 1024 * 1024 });
    this.#ws = ws;
    this.#expectSeq = 0;
    let helloSeen = false;
    ws.on('open', () => {
      this.#heard();
      ws.send(JSON.stringify({ seq: 1, action: 'authentication_challenge', data: { token: this.#opts.token } }));
    });
    ws.on('pong', () => this.#heard());
    ws.on('message', (raw) => {
      this.#heard();
      let msg: unknown;
      try {
        msg = JSON.parse(String(raw));
      } catch {
        log.warn('mattermost: a WebSocket message that is not JSON; ignored');
        return;
      }
      const m = msg as { event?: unknown; status?: unknown; seq_reply?: unknown; error?: { message?: unknown } };
      if (m.seq_reply !== undefined) {
        if (m.status === 'FAIL') {
          const why = typeof m.error?.message === 'string' ? m.error.message : 'authentication failed';
          log.error({ why }, 'mattermost: the WebSocket refused the token');
          this.#opts.onRejected?.(why);
        }
        return;
      }
      if (typeof m.event !== 'string') return;
      const e = msg as SocketEvent;
      if (typeof e.seq === 'number') {
        // The server numbers each connection's events from 0: a jump means some were lost.
        const gap = e.seq > this.#expectSeq;
        this.#expectSeq = e.seq + 1;
        if (gap && helloSeen) this.#opts.onConnected('gap');
      }
      if (e.event === 'hello') {
        helloSeen = true;
        this.connected = true;
        this.#failures = 0;
        const why = this.#connectedOnce ? 'reconnect' : 'first';
        this.#connectedOnce = true;
        log.info({ why }, 'mattermost: WebSocket connected');
        this.#opts.onConnected(why);
        return;
      }
      if (!helloSeen) return;
      this.#opts.onEvent(e);
    });
    ws.on('error', (err) => log.warn({ err: err.message }, 'mattermost: WebSocket error'));
    ws.on('unexpected-response', (_req, res) => {
      if (res.statusCode === 401) this.#opts.onRejected?.(`HTTP ${res.statusCode}`);
      log.warn({ status: res.statusCode }, 'mattermost: WebSocket upgrade refused');
      ws.terminate();
    });
    ws.on('close', () => {
      this.connected = false;
      clearInterval(this.#idle);
      if (this.#ws !== ws || this.#closed) return;
      this.#failures++;
      const wait = backoffDelay({ baseMs: this.#opts.backoff.initialMs, maxMs: this.#opts.backoff.maxMs, jitter: 0.2 }, this.#failures);
      log.warn({ retryInMs: wait, failures: this.#failures }, 'mattermost: WebSocket closed; reconnecting');
      this.#retry = setTimeout(() => this.#connect(), wait);
      this.#retry.unref();
    });
    clearInterval(this.#idle);
    const idleMs = this.#opts.idleMs ?? 60_000;
    this.#idle = setInterval(
      () => {
        if (Date.now() - this.#lastHeard > idleMs) {
          log.warn('mattermost: WebSocket silent too long; reconnecting');
          ws.terminate();
          return;
        }
        if (ws.readyState === WebSocket.OPEN) ws.ping();
      },
      Math.max(1_000, Math.floor(idleMs / 2)),
    );
    this.#idle.unref();
  }

  #heard(): void {
    this.#lastHeard = Date.now();
  }
}
