/**
 * Requests exactly as Slack sends them to an app: Events API envelopes (JSON), interactivity
 * (a form with a `payload` JSON field) and slash commands (a plain form), each signed with the
 * app's signing secret (v0 HMAC over "v0:<timestamp>:<raw body>", `X-Slack-Request-Timestamp`).
 * Pure builders; the Slack fake binds them to its secret, ids and response URLs.
 */
import { createHmac, randomUUID } from 'node:crypto';

export interface SignedRequest {
  headers: Record<string, string>;
  body: string;
}

export interface SignOptions {
  /** Seconds since the epoch. Default: now. */
  timestamp?: number;
  /** Sign with another secret (a forgery). */
  secret?: string;
  /** `X-Slack-Retry-Num` / `X-Slack-Retry-Reason`, as Slack sends on redelivery. */
  retryNum?: number;
  retryReason?: string;
}

export function sign(secret: string, body: string, contentType: string, opts: SignOptions = {}): SignedRequest {
  const ts = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', opts.secret ?? secret)
    .update(`v0:${ts}:${body}`)
    .digest('hex')}`;
  const headers: Record<string, string> = {
    'content-type': contentType,
    'x-slack-request-timestamp': String(ts),
    'x-slack-signature': signature,
    'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
  };
  if (opts.retryNum !== undefined) {
    headers['x-slack-retry-num'] = String(opts.retryNum);
    headers['x-slack-retry-reason'] = opts.retryReason ?? 'http_timeout';
  }
  return { headers, body };
}

export interface Workspace {
  teamId: string;
  apiAppId: string;
  botUserId: string;
}

let seq = 0;
export const nextEventId = (): string => `Ev${Date.now().toString(36).toUpperCase()}${(++seq).toString().padStart(4, '0')}`;

/** An Events API `event_callback` envelope. */
export function eventEnvelope(ws: Workspace, event: Record<string, unknown>, opts: { eventId?: string; eventTime?: number } = {}): Record<string, unknown> {
  return {
    token: 'verification-token-unused',
    team_id: ws.teamId,
    api_app_id: ws.apiAppId,
    event: { event_ts: `${Math.floor(Date.now() / 1000)}.000100`, ...event },
    type: 'event_callback',
    event_id: opts.eventId ?? nextEventId(),
    event_time: opts.eventTime ?? Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: ws.teamId, user_id: ws.botUserId, is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
  };
}

export function reactionEvent(opts: {
  user: string;
  reaction: string;
  channel: string;
  ts: string;
  itemUser: string;
  removed?: boolean;
}): Record<string, unknown> {
  return {
    type: opts.removed ? 'reaction_removed' : 'reaction_added',
    user: opts.user,
    reaction: opts.reaction,
    item_user: opts.itemUser,
    item: { type: 'message', channel: opts.channel, ts: opts.ts },
  };
}

export function messageEvent(opts: {
  user: string;
  text: string;
  channel: string;
  ts: string;
  threadTs?: string;
  subtype?: string;
  botId?: string;
}): Record<string, unknown> {
  return {
    type: 'message',
    channel: opts.channel,
    user: opts.user,
    text: opts.text,
    ts: opts.ts,
    channel_type: 'channel',
    client_msg_id: randomUUID(),
    ...(opts.threadTs ? { thread_ts: opts.threadTs } : {}),
    ...(opts.subtype ? { subtype: opts.subtype } : {}),
    ...(opts.botId ? { bot_id: opts.botId } : {}),
  };
}

export function appMentionEvent(opts: { user: string; text: string; channel: string; ts: string; threadTs?: string }): Record<string, unknown> {
  return { ...messageEvent(opts), type: 'app_mention' };
}

/** A slash command's form fields. */
export function slashCommandForm(
  ws: Workspace,
  opts: { command?: string; text: string; user: string; userName?: string; channel: string; responseUrl: string; triggerId?: string },
): Record<string, string> {
  return {
    token: 'verification-token-unused',
    team_id: ws.teamId,
    team_domain: 'reprise-test',
    channel_id: opts.channel,
    channel_name: 'incidents',
    user_id: opts.user,
    user_name: opts.userName ?? 'ann',
    command: opts.command ?? '/reprise',
    text: opts.text,
    api_app_id: ws.apiAppId,
    is_enterprise_install: 'false',
    response_url: opts.responseUrl,
    trigger_id: opts.triggerId ?? `${Date.now()}.${++seq}.trigger`,
  };
}

/** A `block_actions` payload for a click on a button or a choice in a static select. */
export function blockActionsPayload(
  ws: Workspace,
  opts: {
    user: string;
    userName?: string;
    channel: string;
    messageTs: string;
    actionId: string;
    blockId?: string;
    value?: string;
    selected?: string;
    responseUrl: string;
    actionTs?: string;
  },
): Record<string, unknown> {
  const action: Record<string, unknown> = opts.selected
    ? {
        type: 'static_select',
        action_id: opts.actionId,
        block_id: opts.blockId ?? 'b',
        selected_option: { text: { type: 'plain_text', text: opts.selected }, value: opts.selected },
        action_ts: opts.actionTs ?? `${Date.now() / 1000}`,
      }
    : {
        type: 'button',
        action_id: opts.actionId,
        block_id: opts.blockId ?? 'b',
        text: { type: 'plain_text', text: 'x' },
        value: opts.value,
        action_ts: opts.actionTs ?? `${Date.now() / 1000}`,
      };
  return {
    type: 'block_actions',
    user: { id: opts.user, username: opts.userName ?? 'ann', name: opts.userName ?? 'ann', team_id: ws.teamId },
    api_app_id: ws.apiAppId,
    token: 'verification-token-unused',
    container: { type: 'message', message_ts: opts.messageTs, channel_id: opts.channel, is_ephemeral: false },
    trigger_id: `${Date.now()}.${++seq}.trigger`,
    team: { id: ws.teamId, domain: 'reprise-test' },
    channel: { id: opts.channel, name: 'incidents' },
    message: { type: 'message', ts: opts.messageTs, user: ws.botUserId, bot_id: 'B0', text: 'card' },
    response_url: opts.responseUrl,
    actions: [action],
  };
}

/** Signed JSON (Events API). */
export function signEvent(secret: string, envelope: Record<string, unknown>, opts?: SignOptions): SignedRequest {
  return sign(secret, JSON.stringify(envelope), 'application/json', opts);
}

/** Signed form (slash command). */
export function signForm(secret: string, form: Record<string, string>, opts?: SignOptions): SignedRequest {
  return sign(secret, new URLSearchParams(form).toString(), 'application/x-www-form-urlencoded', opts);
}

/** Signed interactivity payload (`payload=<json>` form). */
export function signInteraction(secret: string, payload: Record<string, unknown>, opts?: SignOptions): SignedRequest {
  return signForm(secret, { payload: JSON.stringify(payload) }, opts);
}

/** POSTs a signed request to an app's Slack route. */
export function deliver(url: string, req: SignedRequest): Promise<Response> {
  return fetch(url, { method: 'POST', headers: req.headers, body: req.body });
}
