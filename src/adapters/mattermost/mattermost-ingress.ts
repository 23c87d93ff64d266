/**
 * Mattermost's optional ingress, on only when the bot is reachable (`server.public_url`): the
 * card's buttons (👍 Accurate · 👎 Off-base · 👀 On it · 🔕 Silence 4h, as message attachments
 * whose `integration.url` is ours) and the `/reprise` slash command.
 *
 * Mattermost signs neither request. A slash command carries the token Mattermost showed when the
 * command was made (`transport.mattermost.slash_token`), compared in constant time. A button
 * carries back the `context` the bot put on it, which holds an HMAC of the action and the
 * incident (keyed from the bot token): a forged click cannot invent an action on an incident,
 * although it can claim any user id — the server vouches for nobody here (docs/mattermost.md).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ChatIntent, IntentSink } from '../../core/chat/chat-types.js';
import { commandIntent } from '../../core/chat/thread-text.js';
import { RepriseError } from '../../core/errors.js';
import type { HttpApp } from '../../http/create-server.js';
import type { HttpContext } from '../../http/http-app.js';
import { decodeUtf8, readRequestBody } from '../../http/read-body.js';
import type { Logger } from '../../ports/logger.js';
import { REACTION_SILENCE, TRANSPORT } from './mattermost-inbound.js';

export const COMMAND_PATH = '/mattermost/command';
export const ACTIONS_PATH = '/mattermost/actions';

const ACTIONS = { vote_up: '👍 Accurate', vote_down: '👎 Off-base', ack: '👀 On it', silence: `🔕 Silence ${REACTION_SILENCE}` } as const;
export type ButtonAction = keyof typeof ACTIONS;
const isAction = (v: unknown): v is ButtonAction => typeof v === 'string' && Object.hasOwn(ACTIONS, v);

export interface IngressOptions {
  /** `server.public_url`: where Mattermost reaches the bot. */
  publicUrl: string;
  /** The Mattermost server: answers go only to its `response_url`s. */
  serverUrl: string;
  /** The bot token: the button HMAC key is derived from it (stable across restarts and replicas). */
  botToken: string;
  slashToken?: string;
  bodyLimitBytes: number;
  logger: Logger;
  /** The name a channel was configured by, for the command gate. */
  channelName(id: string): string;
  sink(): IntentSink | undefined;
}

export class MattermostIngress {
  readonly #opts: IngressOptions;
  readonly #key: Buffer;

  constructor(opts: IngressOptions) {
    this.#opts = opts;
    this.#key = createHmac('sha256', opts.botToken).update('reprise mattermost button context v1').digest();
  }

  #sign(action: string, controls: string): string {
    return createHmac('sha256', this.#key).update(`${action}\u0000${controls}`).digest('base64url');
  }

  /** The card's buttons, as `props.attachments`. */
  attachments(controlsId: string): Array<Record<string, unknown>> {
    const url = `${this.#opts.publicUrl.replace(/\/+$/, '')}${ACTIONS_PATH}`;
    return [
      {
        actions: Object.entries(ACTIONS).map(([action, name]) => ({
          id: action.replace(/_/g, ''),
          name,
          type: 'button',
          integration: { url, context: { action, controls: controlsId, sig: this.#sign(action, controlsId) } },
        })),
      },
    ];
  }

  mount(app: HttpApp): void {
    app.post(ACTIONS_PATH, (c) => this.#action(c));
    if (this.#opts.slashToken) app.post(COMMAND_PATH, (c) => this.#command(c));
  }

  async #read(c: HttpContext): Promise<string> {
    const readSigned = c.get('readSigned');
    const raw = readSigned ? await readSigned(c, 'mattermost', this.#opts.bodyLimitBytes) : await readRequestBody(c, { limitBytes: this.#opts.bodyLimitBytes });
    return decodeUtf8(raw);
  }

  async #take(intent: ChatIntent): Promise<void> {
    const sink = this.#opts.sink();
    if (!sink) throw new RepriseError('unavailable', 'the Mattermost transport is not running');
    await sink(intent);
  }

  async #command(c: HttpContext): Promise<Response> {
    const form = new URLSearchParams(await this.#read(c));
    if (!sameSecret(form.get('token') ?? '', this.#opts.slashToken!)) throw new RepriseError('unauthorized', 'mattermost slash command: wrong token');
    const user = form.get('user_id') ?? '';
    const channel = form.get('channel_id') ?? '';
    const url = form.get('response_url') ?? '';
    const trigger = form.get('trigger_id') ?? '';
    if (!/^[a-z0-9]{26}$/.test(user) || !/^[a-z0-9]{26}$/.test(channel) || !trigger)
      throw new RepriseError('bad_request', 'mattermost slash command without user, channel or trigger');
    // Answers go back to the Mattermost server only: a response_url elsewhere is never called.
    if (!url.startsWith(`${this.#opts.serverUrl.replace(/\/+$/, '')}/`))
      throw new RepriseError('bad_request', 'mattermost slash command: response_url is not the server');
    const name = form.get('user_name') ?? undefined;
    await this.#take(
      commandIntent(form.get('text') ?? '', {
        eventId: `command:${trigger}`,
        actor: { id: user, ...(name ? { name } : {}), via: TRANSPORT },
        channel: this.#opts.channelName(channel),
        replyTo: { kind: 'response_url', url },
      }),
    );
    return c.body(null, 200);
  }

  async #action(c: HttpContext): Promise<Response> {
    let body: { user_id?: unknown; user_name?: unknown; channel_id?: unknown; post_id?: unknown; trigger_id?: unknown; context?: Record<string, unknown> };
    try {
      body = JSON.parse(await this.#read(c)) as typeof body;
    } catch {
      throw new RepriseError('bad_request', 'mattermost button: the body is not JSON');
    }
    const ctx = body?.context;
    const action = ctx?.['action'];
    const controls = ctx?.['controls'];
    const sig = ctx?.['sig'];
    if (!isAction(action) || typeof controls !== 'string' || typeof sig !== 'string' || !sameSecret(sig, this.#sign(action, controls)))
      throw new RepriseError('unauthorized', 'mattermost button: the context is not one the bot made');
    const ids = [body.user_id, body.channel_id, body.post_id];
    if (!ids.every((v) => typeof v === 'string' && /^[a-z0-9]{26}$/.test(v)))
      throw new RepriseError('bad_request', 'mattermost button without user, channel or post');
    const [user, channel, post] = ids as [string, string, string];
    const name = typeof body.user_name === 'string' && body.user_name !== '' ? body.user_name : undefined;
    const eventId = `action:${post}:${user}:${action}:${typeof body.trigger_id === 'string' ? body.trigger_id : ''}`;
    const actor = { id: user, ...(name ? { name } : {}), via: TRANSPORT };
    const target = { message: { transport: TRANSPORT, channel, id: post }, controlsId: controls };
    const replyTo = { kind: 'ephemeral', channel, user } as const;
    const intent: ChatIntent =
      action === 'silence'
        ? { type: 'silence', eventId, actor, duration: REACTION_SILENCE, target, replyTo }
        : action === 'ack'
          ? { type: 'ack', eventId, actor, target, replyTo }
          : { type: 'vote', eventId, actor, vote: action === 'vote_up' ? 'up' : 'down', target, replyTo };
    await this.#take(intent);
    return c.json({}, 200);
  }
}

/** Constant-time equality of two secrets of any length (hashed first). */
function sameSecret(a: string, b: string): boolean {
  const h = (s: string): Buffer => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(a), h(b));
}
