import { describe, expect, it } from 'vitest';
import { responseUrlError, retryAfterMs, toDeliveryError } from '../../../../src/adapters/slack/delivery-error.js';
import { controlsBlockId, parseControlsBlockId } from '../../../../src/adapters/slack/slack-controls.js';
import { slackTextToPlain } from '../../../../src/adapters/slack/slack-text.js';
import { fromBlockAction, fromCommand, fromMention, fromMessage, fromReaction, normaliseReaction } from '../../../../src/adapters/slack/to-intent.js';
import { slackSignature, verifySlackSignature } from '../../../../src/adapters/slack/verify-slack-signature.js';

const self = { userId: 'UBOT', botId: 'BBOT' };

describe('slackTextToPlain', () => {
  it('turns Slack markup into plain text and notices the bot being addressed', () => {
    expect(slackTextToPlain('<@UBOT> note: &lt;b&gt; &amp; <#C1|ops> <@U2|bob> <!here> <https://x.example.com|docs> <mailto:a@b.c|a@b.c>', 'UBOT')).toEqual({
      text: 'note: <b> & #ops @bob @here docs (https://x.example.com) a@b.c',
      addressed: true,
    });
    expect(slackTextToPlain('<@UBOT|reprise> silence: 4h', 'UBOT')).toEqual({ text: 'silence: 4h', addressed: true });
    expect(slackTextToPlain('hi <@U9>', 'UBOT')).toEqual({ text: 'hi @U9', addressed: false });
    expect(slackTextToPlain('<!subteam^S1|@oncall> <!date^1700000000^{date}|Nov 14>').text).toBe('@oncall Nov 14');
  });

  // How the work grows is measured by the benchmark (REPRISE_BENCH_ONLY=growth).
  it('reads hostile input whole (an open `<` run before plain text)', () => {
    const { text, addressed } = slackTextToPlain('<'.repeat(200_000) + 'x'.repeat(200_000));
    expect(text.endsWith('x'.repeat(200_000))).toBe(true);
    expect(addressed).toBe(false);
  });
});

describe('payloads to intents (what the person meant)', () => {
  const reaction = (over: Record<string, unknown>) => ({
    event_id: 'Ev1',
    event: { type: 'reaction_added', user: 'U1', reaction: '+1', item_user: 'UBOT', item: { type: 'message', channel: 'C1', ts: '1.2' }, ...over },
  });

  it('reactions: only on the bot’s messages, never the bot’s own; 👍 / 👎 vote, a removed one clears, 🔕 silences 4 h, others mean nothing', () => {
    const target = { message: { transport: 'slack', channel: 'C1', id: '1.2' } };
    const actor = { id: 'U1', via: 'slack' };
    expect(fromReaction(reaction({}), false, self)).toEqual({ intent: { type: 'vote', eventId: 'Ev1', actor, vote: 'up', target } });
    expect(fromReaction(reaction({ reaction: 'thumbsdown::skin-tone-4' }), false, self)).toEqual({
      intent: { type: 'vote', eventId: 'Ev1', actor, vote: 'down', target },
    });
    expect(fromReaction(reaction({ reaction: '-1' }), true, self)).toEqual({ intent: { type: 'vote', eventId: 'Ev1', actor, vote: 'clear', target } });
    expect(fromReaction(reaction({ reaction: 'no_bell' }), false, self)).toEqual({
      intent: { type: 'silence', eventId: 'Ev1', actor, duration: '4h', target },
    });
    expect(fromReaction(reaction({ reaction: 'no_bell' }), true, self)).toHaveProperty('skip');
    expect(fromReaction(reaction({ reaction: 'tada' }), false, self)).toHaveProperty('skip');
    expect(fromReaction(reaction({ item_user: 'U2' }), false, self)).toEqual({ skip: 'reaction on a message the bot did not send' });
    expect(fromReaction(reaction({ user: 'UBOT' }), false, self)).toEqual({ skip: "the bot's own reaction" });
    expect(fromReaction(reaction({ item: { type: 'file', file: 'F1' } }), false, self)).toHaveProperty('skip');
    expect(fromReaction({ event: 'nonsense' }, false, self)).toHaveProperty('skip');
    expect(['thumbsup', '+1::skin-tone-2', 'thumbsdown', '-1', 'no_bell', 'eyes'].map(normaliseReaction)).toEqual(['+1', '+1', '-1', '-1', 'no_bell', 'eyes']);
  });

  it('messages: replies addressed to the bot in a thread, by people only; a mention is left to app_mention', () => {
    const msg = (over: Record<string, unknown>) => ({
      event_id: 'Ev2',
      event: { type: 'message', user: 'U1', channel: 'C1', ts: '2.1', thread_ts: '1.2', text: 'hello', ...over },
    });
    expect(fromMessage(msg({}), self)).toEqual({ skip: 'thread reply that does not address the bot' });
    expect(fromMessage(msg({ text: '<@UBOT> note: x' }), self)).toEqual({ skip: 'mentions the bot: handled as app_mention' });
    expect(fromMessage(msg({ thread_ts: undefined }), self)).toHaveProperty('skip');
    expect(fromMessage(msg({ thread_ts: '2.1' }), self)).toHaveProperty('skip');
    expect(fromMessage(msg({ bot_id: 'B9' }), self)).toEqual({ skip: 'message from a bot' });
    // The bot's own replies (`ack` in a notice it wrote, a fix it quoted) never count as a person's.
    expect(fromMessage(msg({ user: 'UBOT', text: 'ack' }), self)).toEqual({ skip: 'message from a bot' });
    expect(fromMessage(msg({ user: 'UOTHER', bot_id: 'B7', text: 'fixed: restarted it' }), self)).toEqual({ skip: 'message from a bot' });
    expect(fromMessage(msg({ subtype: 'bot_message', text: 'ack' }), self)).toHaveProperty('skip');
    expect(fromMessage(msg({ subtype: 'message_deleted' }), self)).toHaveProperty('skip');
    expect(fromMessage(msg({ subtype: 'thread_broadcast' }), self)).toHaveProperty('skip');
    // A plain reply in a thread counts as `ack` or `fixed: …` (README: "`ack` in the thread"), nothing else.
    const root = { transport: 'slack', channel: 'C1', id: '1.2' };
    expect(fromMessage(msg({ text: 'ack' }), self)).toEqual({
      intent: { type: 'ack', eventId: 'Ev2', actor: { id: 'U1', via: 'slack' }, target: { message: root } },
    });
    expect(fromMessage(msg({ text: 'ACK!' }), self)).toMatchObject({ intent: { type: 'ack' } });
    expect(fromMessage(msg({ text: 'fixed: restarted `journald` &amp; set LOG_LEVEL=info <https://wiki.example/x|runbook>' }), self)).toEqual({
      intent: {
        type: 'fixed',
        eventId: 'Ev2',
        actor: { id: 'U1', via: 'slack' },
        text: 'restarted `journald` & set LOG_LEVEL=info runbook (https://wiki.example/x)',
        target: { message: root },
      },
    });
    for (const chatter of ['ack the deploy first?', 'fixed it myself', 'fixed:', 'fixed:   ', 'note: x', 'silence 4h', 'acknowledged', 'postmortem'])
      expect(fromMessage(msg({ text: chatter }), self), chatter).toEqual({ skip: 'thread reply that does not address the bot' });
    // Top-level `ack` is not in a thread: not the bot's business.
    expect(fromMessage(msg({ text: 'ack', thread_ts: undefined }), self)).toHaveProperty('skip');
    const mention = (text: string, thread = true) => ({
      event_id: 'Ev3',
      event: { type: 'app_mention', user: 'U1', channel: 'C1', ts: '3.1', ...(thread ? { thread_ts: '1.2' } : {}), text },
    });
    const thread = { transport: 'slack', channel: 'C1', id: '1.2' };
    expect(fromMention(mention('<@UBOT> note: the disk filled up'), self)).toEqual({
      intent: { type: 'note', eventId: 'Ev3', actor: { id: 'U1', via: 'slack' }, text: 'the disk filled up', target: { message: thread } },
    });
    // No verb: a question (issue 21 item 3); `fixed:` says what fixed it.
    expect(fromMention(mention('<@UBOT> what fixed it last time?'), self)).toEqual({
      intent: { type: 'question', eventId: 'Ev3', actor: { id: 'U1', via: 'slack' }, text: 'what fixed it last time?', target: { message: thread } },
    });
    expect(fromMention(mention('<@UBOT> fixed: rolled back deploy 4f2a'), self)).toEqual({
      intent: { type: 'fixed', eventId: 'Ev3', actor: { id: 'U1', via: 'slack' }, text: 'rolled back deploy 4f2a', target: { message: thread } },
    });
    expect(fromMention(mention('<@UBOT> silence: 24h am'), self)).toMatchObject({
      intent: { type: 'silence', duration: '24h', alertmanager: true, target: { message: thread } },
    });
    expect(fromMention(mention('<@UBOT> status', false), self)).toHaveProperty('skip');
  });

  it('commands and clicks need what Slack always sends, and read defensively', () => {
    expect(
      fromCommand({ user_id: 'U1', channel_id: 'C1', response_url: 'https://hooks.slack.com/x', trigger_id: 't1', text: 'recall &lt;x&gt;' }),
    ).toMatchObject({ intent: { type: 'command', eventId: 'command:t1', name: 'recall', args: '<x>', replyTo: { kind: 'response_url' } } });
    expect(fromCommand({ user_id: 'U1' })).toHaveProperty('skip');
    const click = {
      user: { id: 'U1' },
      channel: { id: 'C1' },
      container: { message_ts: '1.2' },
      response_url: 'https://hooks.slack.com/a',
      actions: [{ action_id: 'reprise_vote_down', block_id: controlsBlockId('firing', 'inc:7'), action_ts: '9.9' }],
    };
    expect(fromBlockAction(click)).toMatchObject({
      intent: { type: 'vote', vote: 'down', target: { controlsId: 'inc:7', message: { channel: 'C1', id: '1.2' } } },
    });
    expect(
      fromBlockAction({
        ...click,
        actions: [{ action_id: 'reprise_silence', block_id: controlsBlockId('firing', 'inc:7'), selected_option: { value: '4h+am' } }],
      }),
    ).toMatchObject({
      intent: { type: 'silence', duration: '4h', alertmanager: true, replyTo: { kind: 'response_url' } },
    });
    expect(fromBlockAction({ ...click, actions: [{ action_id: 'someone_elses' }] })).toHaveProperty('skip');
    expect(fromBlockAction({ ...click, container: { message_ts: '1.2', is_ephemeral: true } })).toHaveProperty('skip');
    expect(fromBlockAction({ ...click, actions: [{ action_id: 'reprise_silence', selected_option: { value: '1y' } }] })).toHaveProperty('skip');
    expect(fromBlockAction({ ...click, actions: 'x' })).toHaveProperty('skip');
  });

  it('controlsId round-trips through the block_id, and foreign block ids give none', () => {
    expect(parseControlsBlockId(controlsBlockId('silenced', 'a:b:c'))).toBe('a:b:c');
    expect(parseControlsBlockId('b')).toBeUndefined();
    expect(parseControlsBlockId('reprise:bogus:x')).toBeUndefined();
    expect(controlsBlockId('firing', 'x'.repeat(300))).toBeUndefined();
  });
});

describe('verifySlackSignature', () => {
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const body = 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&command=%2Fweather';
  const now = 1_531_420_618_000;

  it('computes the signature of Slack’s own documented example', () => {
    const doc =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    expect(slackSignature(secret, 1531420618, doc)).toBe('v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503');
  });

  it('accepts Slack’s signature and rejects stale, future, forged and malformed ones', () => {
    const good = { secret, body, timestamp: '1531420618', signature: slackSignature(secret, '1531420618', body), nowMs: now };
    expect(verifySlackSignature(good)).toEqual({ ok: true });
    expect(verifySlackSignature({ ...good, nowMs: now + 301_000 })).toMatchObject({ ok: false, reason: expect.stringMatching(/stale/) });
    expect(verifySlackSignature({ ...good, nowMs: now - 301_000 })).toMatchObject({ ok: false });
    expect(verifySlackSignature({ ...good, nowMs: now + 299_000 })).toEqual({ ok: true });
    expect(verifySlackSignature({ ...good, body: `${body}&x=1` })).toEqual({ ok: false, reason: 'signature mismatch' });
    expect(verifySlackSignature({ ...good, signature: 'v1=abc' })).toMatchObject({ ok: false });
    expect(verifySlackSignature({ ...good, timestamp: 'soon' })).toMatchObject({ ok: false });
    expect(verifySlackSignature({ ...good, signature: undefined })).toMatchObject({ ok: false });
  });
});

describe('delivery errors', () => {
  it('maps the Web API client’s coded errors', () => {
    expect(toDeliveryError('m', { code: 'slack_webapi_rate_limited_error', retryAfter: 30 })).toMatchObject({ retryable: true, retryAfterMs: 30_000 });
    expect(toDeliveryError('m', { code: 'slack_webapi_platform_error', data: { error: 'is_archived' } })).toMatchObject({ retryable: false });
    expect(toDeliveryError('m', { code: 'slack_webapi_platform_error', data: { error: 'fatal_error' } })).toMatchObject({ retryable: true });
    expect(toDeliveryError('m', { code: 'slack_webapi_http_error', statusCode: 400 })).toMatchObject({ retryable: false });
    expect(toDeliveryError('m', { code: 'slack_webapi_http_error', statusCode: 502 })).toMatchObject({ retryable: true });
    expect(toDeliveryError('m', { code: 'slack_webapi_request_error', original: new Error('ECONNREFUSED') })).toMatchObject({
      retryable: true,
      message: 'slack m: ECONNREFUSED',
    });
    expect(toDeliveryError('m', new Error('??'))).toMatchObject({ retryable: true });
  });

  it('reads Retry-After as seconds or a date, and response_url answers', () => {
    expect(retryAfterMs('12')).toBe(12_000);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(responseUrlError(200, 'ok', null)).toBeUndefined();
    expect(responseUrlError(404, 'expired_url', null)).toMatchObject({ retryable: false });
    expect(responseUrlError(500, '', null)).toMatchObject({ retryable: true });
  });
});

describe('acknowledge on Slack (issue 21)', () => {
  const reaction = (over: Record<string, unknown>) => ({
    event_id: 'EvA',
    event: { type: 'reaction_added', user: 'U1', reaction: 'eyes', item_user: 'UBOT', item: { type: 'message', channel: 'C1', ts: '1.2' }, ...over },
  });
  const target = { message: { transport: 'slack', channel: 'C1', id: '1.2' } };

  it('👀 on the bot’s message is an ack; taking it back is nothing; 👀 on someone else’s message is nothing', () => {
    expect(fromReaction(reaction({}), false, self)).toEqual({ intent: { type: 'ack', eventId: 'EvA', actor: { id: 'U1', via: 'slack' }, target } });
    expect(fromReaction(reaction({ reaction: 'eyes::skin-tone-3' }), false, self)).toMatchObject({ intent: { type: 'ack' } });
    expect(fromReaction(reaction({}), true, self)).toHaveProperty('skip');
    expect(fromReaction(reaction({ item_user: 'U2' }), false, self)).toHaveProperty('skip');
  });

  it('the card’s 👀 On it button is an ack carrying the card’s controls id and a private reply', () => {
    const click = {
      user: { id: 'U1', username: '<!channel>' },
      channel: { id: 'C1' },
      container: { message_ts: '1.2' },
      response_url: 'https://hooks.slack.com/a',
      actions: [{ action_id: 'reprise_ack', block_id: controlsBlockId('firing', 'inc:7'), action_ts: '9.9' }],
    };
    const t = fromBlockAction(click);
    expect(t).toMatchObject({
      intent: { type: 'ack', actor: { id: 'U1', via: 'slack' }, target: { controlsId: 'inc:7' }, replyTo: { kind: 'response_url' } },
    });
    // The legacy handle is not a name people see: a person is their id (core/people.ts).
    expect('intent' in t && t.intent.actor).toEqual({ id: 'U1', via: 'slack' });
  });

  it('@reprise ack in a thread and /reprise ack are acks', () => {
    const mention = { event_id: 'EvM', event: { type: 'app_mention', user: 'U1', channel: 'C1', ts: '3.0', thread_ts: '1.2', text: '<@UBOT> ack' } };
    expect(fromMention(mention, self)).toMatchObject({ intent: { type: 'ack', target: { message: { id: '1.2' } } } });
    const cmd = fromCommand({
      user_id: 'U1',
      channel_id: 'C1',
      response_url: 'https://hooks.slack.com/c',
      trigger_id: 'T1',
      text: 'ack kubepodcrashlooping|payments',
    });
    expect(cmd).toMatchObject({ intent: { type: 'command', name: 'ack', args: 'kubepodcrashlooping|payments' } });
  });
});
