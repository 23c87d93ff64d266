/**
 * Slack's Socket Mode on the fake's port: `apps.connections.open` hands out a ws:// URL with a
 * one-time ticket; the WebSocket says `hello`, carries envelopes (`events_api`,
 * `slash_commands`, `interactive`) and records the app's acks `{envelope_id, payload}`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { waitFor } from '../helpers/wait-for.js';

export interface SocketAck {
  envelope_id: string;
  payload?: unknown;
}

export type EnvelopeType = 'events_api' | 'slash_commands' | 'interactive';

export interface SocketFake {
  /** WebSocket sessions opened so far (a reconnect is a new one). */
  readonly sessions: number;
  connected(): boolean;
  waitForConnection(timeoutMs?: number): Promise<void>;
  /** Sends one envelope to the connected app; returns its envelope id. */
  send(type: EnvelopeType, payload: Record<string, unknown>, opts?: { retryAttempt?: number; retryReason?: string; envelopeId?: string }): string;
  readonly acks: SocketAck[];
  waitForAck(envelopeId: string, timeoutMs?: number): Promise<SocketAck>;
  /** Slack's `disconnect` message (e.g. `refresh_requested`): the app reconnects. */
  disconnect(reason?: string): void;
  /** Drops every session without a word (a network cut). */
  terminateAll(): void;
}

export interface SocketFakeInternals extends SocketFake {
  /** A URL for `apps.connections.open` (one-time ticket). */
  issueUrl(port: number): string;
  close(): void;
}

function until<T>(fn: () => T | undefined, timeoutMs: number | undefined, what: string): Promise<T> {
  return waitFor(fn, { what, ...(timeoutMs ? { timeoutMs } : {}) });
}

export function attachSocketMode(server: Server, appId: string): SocketFakeInternals {
  const wss = new WebSocketServer({ noServer: true });
  const tickets = new Set<string>();
  const acks: SocketAck[] = [];
  let sessions = 0;
  let current: WebSocket | undefined;

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const ticket = url.searchParams.get('ticket') ?? '';
    if (url.pathname !== '/link/' || !tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sessions += 1;
      current = ws;
      ws.on('message', (data) => {
        try {
          const msg = JSON.parse(String(data)) as SocketAck;
          if (typeof msg.envelope_id === 'string') acks.push(msg);
        } catch {
          // Not JSON: Slack would ignore it too.
        }
      });
      ws.on('close', () => {
        if (current === ws) current = undefined;
      });
      ws.send(
        JSON.stringify({
          type: 'hello',
          num_connections: 1,
          debug_info: { host: 'fake-socket', build_number: 1, approximate_connection_time: 18060 },
          connection_info: { app_id: appId },
        }),
      );
    });
  });

  return {
    get sessions() {
      return sessions;
    },
    acks,
    connected: () => current !== undefined && current.readyState === current.OPEN,
    waitForConnection: async (timeoutMs?: number) => {
      await until(() => (current?.readyState === current?.OPEN && current ? true : undefined), timeoutMs, 'a Socket Mode connection');
    },
    send(type, payload, opts = {}) {
      if (!current) throw new Error('no Socket Mode session is connected');
      const envelopeId = opts.envelopeId ?? randomUUID();
      current.send(
        JSON.stringify({
          envelope_id: envelopeId,
          payload,
          type,
          accepts_response_payload: type !== 'events_api',
          ...(type === 'events_api' ? { retry_attempt: opts.retryAttempt ?? 0, retry_reason: opts.retryReason ?? '' } : {}),
        }),
      );
      return envelopeId;
    },
    waitForAck: (envelopeId, timeoutMs) => until(() => acks.find((a) => a.envelope_id === envelopeId), timeoutMs, `the ack of envelope ${envelopeId}`),
    disconnect(reason = 'refresh_requested') {
      current?.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'fake-socket' } }));
    },
    terminateAll() {
      for (const ws of wss.clients) ws.terminate();
    },
    issueUrl(port) {
      const ticket = randomUUID();
      tickets.add(ticket);
      return `ws://127.0.0.1:${port}/link/?ticket=${ticket}`;
    },
    close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}
