/**
 * A Bolt `Receiver` on the bot's own hono app: Events API, interactivity and slash commands
 * all arrive on `POST /slack/events`. The signature headers are checked before the body is
 * read (which then takes a slot of the public port's verify pool), the raw body against the
 * signing secret (five minute window, injected clock) before anything is parsed; a forged or
 * stale request is a 401 through the app's error handler (logged, with the request id) and
 * never reaches Bolt. A signed body that is not a payload Bolt can route is a 400.
 *
 * Bolt acknowledges an Events API delivery before its listeners run; here `ack` only records
 * the answer, and Slack gets it once Bolt has finished with the event (the listener waits for
 * the bot up to its own deadline) — so a bot that *failed* an event answers 500 and Slack
 * retries, while a slow bot still answers in time.
 */
import type { App, Receiver, ReceiverEvent } from '@slack/bolt';
import type { Context } from 'hono';
import { RepriseError } from '../../core/errors.js';
import type { HttpApp, HttpEnv } from '../../http/create-server.js';
import { decodeUtf8, readRequestBody } from '../../http/read-body.js';
import type { Clock } from '../../ports/clock.js';
import { malformedReason } from './slack-payload-shape.js';
import { checkSlackHeaders, verifySlackSignature } from './verify-slack-signature.js';

export interface HonoReceiverOptions {
  signingSecret: string;
  clock: Clock;
  /** Route Slack posts to (Event Subscriptions, Interactivity and the slash command URL). */
  path: string;
  /** Longest Slack waits for its answer; Slack gives up at 3 s. */
  responseDeadlineMs: number;
  bodyLimitBytes: number;
  /** False until the transport is started, and after it is closed: Slack is told to come back. */
  accepting: () => boolean;
}

type Answer = { status: 200; body: unknown } | { status: 500; err: unknown };

export class HonoReceiver implements Receiver {
  #app: App | undefined;
  readonly #opts: HonoReceiverOptions;

  constructor(opts: HonoReceiverOptions) {
    this.#opts = opts;
  }

  init(app: App): void {
    this.#app = app;
  }

  /** Nothing to listen on: the bot's HTTP server does that. */
  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  /** Adds `POST <path>` to the bot's hono app. */
  mount(http: HttpApp): void {
    http.post(this.#opts.path, (c) => this.#handle(c));
  }

  async #handle(c: Context<HttpEnv>): Promise<Response> {
    const timestamp = c.req.header('x-slack-request-timestamp');
    const signature = c.req.header('x-slack-signature');
    const nowMs = this.#opts.clock.now().getTime();
    // Verify early: a request that cannot be Slack's never takes a slot of the verify pool.
    const early = checkSlackHeaders({ timestamp, signature, nowMs });
    if (!early.ok) throw new RepriseError('unauthorized', `slack request rejected: ${early.reason}`);
    const readSigned = c.get('readSigned');
    const raw = readSigned ? await readSigned(c, 'slack', this.#opts.bodyLimitBytes) : await readRequestBody(c, { limitBytes: this.#opts.bodyLimitBytes });
    const check = verifySlackSignature({ secret: this.#opts.signingSecret, body: raw, timestamp, signature, nowMs });
    if (!check.ok) throw new RepriseError('unauthorized', `slack request rejected: ${check.reason}`);

    // Signed by Slack, and still malformed: a 400 (Slack does not retry it), never a 500.
    const body = parseBody(decodeUtf8(raw), c.req.header('content-type'));
    if (body['ssl_check'] !== undefined) return c.body(null, 200);
    if (body['type'] === 'url_verification') return c.json({ challenge: typeof body['challenge'] === 'string' ? body['challenge'] : '' });
    const malformed = malformedReason(body);
    if (malformed) throw new RepriseError('bad_request', `slack request body is not valid: ${malformed}`);
    if (!this.#app || !this.#opts.accepting()) throw new RepriseError('unavailable', 'the Slack transport is not running');

    const retry = c.req.header('x-slack-retry-num');
    const retryNum = retry !== undefined && /^\d+$/.test(retry) ? Number(retry) : undefined;
    const retryReason = c.req.header('x-slack-retry-reason');
    const answer = await this.#dispatch(body, c, retryNum, retryReason);
    if (answer.status === 500) throw new RepriseError('internal', 'the bot could not take this Slack request; Slack retries events', { cause: answer.err });
    if (answer.body === undefined || answer.body === '') return c.body(null, 200);
    return typeof answer.body === 'string' ? c.text(answer.body, 200) : c.json(answer.body as object, 200);
  }

  async #dispatch(body: Record<string, unknown>, c: Context<HttpEnv>, retryNum: number | undefined, retryReason: string | undefined): Promise<Answer> {
    const log = c.get('log');
    let acked = false;
    let ackBody: unknown;
    const event: ReceiverEvent = {
      body,
      ack: async (response?: unknown) => {
        if (acked) return;
        acked = true;
        ackBody = response;
      },
      customProperties: { requestId: c.get('requestId') },
      ...(retryNum === undefined ? {} : { retryNum }),
      ...(retryReason === undefined ? {} : { retryReason }),
    };
    const processing = this.#app!.processEvent(event).then(
      () => ({ kind: 'done' as const }),
      (err: unknown) => ({ kind: 'failed' as const, err }),
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<{ kind: 'late' }>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'late' }), this.#opts.responseDeadlineMs);
    });
    const outcome = await Promise.race([processing, late]);
    clearTimeout(timer);
    if (outcome.kind === 'late') {
      log.warn({ acked }, `slack request still being handled after ${this.#opts.responseDeadlineMs} ms; answered 200 so Slack does not retry`);
      void processing.then((o) => {
        if (o.kind === 'failed') log.error({ err: o.err }, 'slack request failed after it was answered');
      });
      return { status: 200, body: ackBody };
    }
    if (outcome.kind === 'failed') {
      // An event the bot failed is answered 500 so Slack delivers it again.
      if (body['type'] === 'event_callback' || !acked) return { status: 500, err: outcome.err };
      log.error({ err: outcome.err }, 'slack request failed after it was acknowledged');
    }
    return { status: 200, body: ackBody };
  }
}

/** Events API posts JSON; interactivity posts a form with a `payload` JSON field; commands post a plain form. */
export function parseBody(raw: string, contentType: string | undefined): Record<string, unknown> {
  try {
    if (contentType?.toLowerCase().includes('application/json')) {
      const v: unknown = JSON.parse(raw);
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
      return v as Record<string, unknown>;
    }
    const form = new URLSearchParams(raw);
    const payload = form.get('payload');
    if (payload !== null) {
      const v: unknown = JSON.parse(payload);
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('payload is not an object');
      return v as Record<string, unknown>;
    }
    return Object.fromEntries(form.entries());
  } catch (err) {
    throw new RepriseError('bad_request', `slack request body is not valid: ${err instanceof Error ? err.message : String(err)}`);
  }
}
