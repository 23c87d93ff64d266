/**
 * An OpenAI-compatible Chat Completions server on 127.0.0.1, port 0: scripted answers (text,
 * tool calls, usage — or none), HTTP errors and delays; records every request it received so
 * tests assert on the wire.
 */
import { createServer, type Server } from 'node:http';

export interface WireMessage {
  role: string;
  content?: string | null;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface RecordedRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: { model: string; messages: WireMessage[]; tools?: Array<{ type: string; function: { name: string } }>; max_tokens?: number } & Record<string, unknown>;
  /** The client closed the connection before the fake answered. */
  abandoned?: boolean;
}

/** One scripted answer. */
export interface FakeReply {
  content?: string | null;
  /** `arguments` may be an object (serialised) or raw text (to script malformed JSON). */
  toolCalls?: Array<{ name: string; arguments: string | Record<string, unknown>; id?: string }>;
  /** Omitted → 100 in / 20 out; `null` → no usage field at all. */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  finishReason?: string;
  /** Answer with this HTTP status and an error body instead. */
  status?: number;
  /** The error body's message (default `scripted <status>`). */
  errorMessage?: string;
  delayMs?: number;
}

export type Responder = (req: RecordedRequest, index: number) => FakeReply;

export interface OpenAIFake {
  /** Base URL to configure (`…/v1`). */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Replaces how the fake answers. */
  respond(r: Responder): void;
  /**
   * Cuts every open connection — a request still waiting out its `delayMs` included — as a model
   * server going away would; the fake keeps listening for new ones.
   */
  hangUp(): void;
  close(): Promise<void>;
}

let nextId = 0;

export async function startOpenAIFake(responder: Responder = () => ({ content: '{}' })): Promise<OpenAIFake> {
  let respond = responder;
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: RecordedRequest['body'];
      try {
        body = JSON.parse(raw) as RecordedRequest['body'];
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'bad json' } }));
        return;
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
        return;
      }
      const rec: RecordedRequest = { path: req.url, headers: req.headers, body };
      requests.push(rec);
      // The client hung up before the answer (an aborted call): recorded the moment it happens.
      res.once('close', () => {
        if (!res.writableFinished) rec.abandoned = true;
      });
      const r = respond(rec, requests.length - 1);
      if (r.delayMs) await new Promise((f) => setTimeout(f, r.delayMs));
      if (res.destroyed) return;
      if (r.status && r.status >= 400) {
        res
          .writeHead(r.status, { 'content-type': 'application/json' })
          .end(
            JSON.stringify({ error: { message: r.errorMessage ?? `scripted ${r.status}`, type: r.status < 500 ? 'invalid_request_error' : 'server_error' } }),
          );
        return;
      }
      const toolCalls = (r.toolCalls ?? []).map((t) => ({
        id: t.id ?? `call_${++nextId}`,
        type: 'function',
        function: { name: t.name, arguments: typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments) },
      }));
      const usage = r.usage === null ? undefined : (r.usage ?? { prompt_tokens: 100, completion_tokens: 20 });
      const answer = {
        id: `chatcmpl-${++nextId}`,
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: r.content ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
            finish_reason: r.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop'),
          },
        ],
        ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    respond(r) {
      respond = r;
    },
    hangUp: () => server.closeAllConnections(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
