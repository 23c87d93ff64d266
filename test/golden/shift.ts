/**
 * The golden shift (issue 28 item 1): one scripted on-call shift, the same on every surface,
 * driven through the real entrances with a stepped clock. It returns what people read: each
 * step's time and action, then every message the bot sent or edited because of it, rendered the
 * way the surface shows it (see slack-text.ts, matrix-text.ts), plus the CLI's human output and
 * the `/ui` pages' text.
 */
import { convert } from 'html-to-text';
import type { SlackFakeRequest } from '../fakes/slack-fake.js';
import { deliver, appMentionEvent, messageEvent, reactionEvent } from '../fakes/slack-requests.js';
import type { RecordedSend } from '../fakes/matrix-homeserver.js';
import type { MattermostTransport } from '../../src/adapters/mattermost/mattermost-transport.js';
import { waitFor } from '../helpers/wait-for.js';
import { matrixMessageText } from './matrix-text.js';
import { mattermostPostText } from './mattermost-text.js';
import { MATRIX, SLACK, SLACK_NAMES, startWorld, type Surface, type World } from './shift-world.js';
import { slackMessageText } from './slack-text.js';

/** What the shift produced, per file a person reads. */
export interface ShiftText {
  chat: string;
  cli: string;
  ui?: string;
}

/** The shift's workload: a log router nobody has written about yet. */
const POD = ['log-router-6c8d9f7b4-aaaa1', 'log-router-6c8d9f7b4-bbbb2', 'log-router-6c8d9f7b4-cccc3', 'log-router-6c8d9f7b4-dddd4'];
const TRIGGER_WORDS = 'log-router crashlooping';

function alertOf(pod: string, status: 'firing' | 'resolved', startsAt: string, endsAt?: string): Record<string, unknown> {
  const labels = { alertname: 'KubePodCrashLooping', namespace: 'logging', pod, container: 'log-router', cluster: 'prod-eu-1', severity: 'warning' };
  return {
    status,
    labels,
    annotations: {
      summary: 'Pod is crash looping.',
      description: `Pod logging/${pod} (container log-router) is in waiting state (reason: "CrashLoopBackOff").`,
    },
    startsAt,
    endsAt: status === 'resolved' ? endsAt : '0001-01-01T00:00:00Z',
    generatorURL: 'http://prometheus-k8s.monitoring:9090/graph',
    fingerprint: `fp-${pod.slice(-5)}`,
  };
}

/** An Alertmanager webhook of one notification group (`group_by: [alertname, namespace]`). */
function webhook(status: 'firing' | 'resolved', alerts: Array<Record<string, unknown>>): Record<string, unknown> {
  return {
    version: '4',
    groupKey: '{}:{alertname="KubePodCrashLooping", namespace="logging"}',
    status,
    receiver: 'reprise',
    groupLabels: { alertname: 'KubePodCrashLooping', namespace: 'logging' },
    commonLabels: { alertname: 'KubePodCrashLooping', namespace: 'logging', container: 'log-router', cluster: 'prod-eu-1', severity: 'warning' },
    commonAnnotations: {},
    externalURL: 'http://alertmanager.monitoring:9093',
    truncatedAlerts: 0,
    alerts,
  };
}

/** A person on the surface, and how the surface names them in text they type. */
interface Person {
  name: 'ann' | 'bob';
}

/** How people act on one surface; `thread` is the n-th card (1-based). */
interface Driver {
  ack(p: Person, thread: number): Promise<string>;
  /** "ack" typed in the card's thread, the surface's way: a plain reply on Slack, `!reprise ack` on Matrix, the CLI. */
  typedAck(p: Person, thread: number): Promise<string>;
  /** Something addressed to the bot in the card's thread (surface syntax added here). */
  say(p: Person, thread: number, text: string): Promise<string>;
  voteDown(p: Person, thread: number): Promise<string>;
  silence(p: Person, thread: number, duration: string): Promise<string>;
  /** A command outside any thread: `/reprise …`, `!reprise …`, the CLI. */
  command(p: Person, text: string): Promise<string>;
  /** How a person writes a mention of `p` in a message. */
  mention(p: Person): string;
  /** What the surface showed since the last call, rendered. */
  shown(): string[];
}

const hhmm = (d: Date): string => d.toISOString().slice(11, 16);

/**
 * Waits until the bot has finished what a step set off: nothing pending and nothing running
 * (background effects, outbox, curation), the ledger's seq the same over two looks, and the
 * step's input taken in. Slack is answered once the bot took the event, and a CLI command once
 * the control socket did, so there the input is in the ledger when the driver returns; on Matrix
 * the bot is long-polling `/sync` again with nothing newer (its position moves only once a batch
 * was handled); Mattermost's WebSocket frames carry no answer, so there the bot must have
 * handled as many events as the stand-in sent.
 */
async function settle(w: World): Promise<void> {
  const mattermost = w.running.transports.get('mattermost') as MattermostTransport | undefined;
  let prev = -1;
  let stable = 0;
  await waitFor(
    async () => {
      await w.running.bot.idle();
      await w.running.outbox.idle();
      await w.running.curation?.idle();
      const seq = w.running.ledger.seq;
      const taken = (w.matrix?.caughtUp() ?? true) && (!w.mattermost || (mattermost?.eventsHandled ?? 0) >= w.mattermost.eventsSent);
      const quiet = seq === prev && w.running.outbox.status().pending === 0 && taken;
      stable = quiet ? stable + 1 : 0;
      prev = seq;
      return stable >= 2 ? true : undefined;
    },
    { what: 'the bot to settle', timeoutMs: 30_000, intervalMs: 5 },
  );
}

function slackDriver(w: World): Driver {
  const s = w.slack!;
  const events = `${w.url}/slack/events`;
  const sec = (): number => Math.floor(w.clock.now().getTime() / 1000);
  let n = 0;
  const ts = (): string => `${sec()}.${String(++n).padStart(6, '0')}`;
  const cards = (): string[] => s.messages.filter((m) => m.channel === SLACK.channel && !m.thread_ts).map((m) => m.ts);
  const card = (i: number): string => cards()[i - 1] ?? '';
  const id = (p: Person): string => SLACK[p.name];
  const send = async (req: Parameters<typeof deliver>[1]): Promise<void> => {
    const r = await deliver(events, req);
    if (r.status !== 200) throw new Error(`Slack request answered ${r.status}: ${await r.text()}`);
  };
  const react = async (p: Person, thread: number, reaction: string): Promise<void> =>
    send(s.signed.event(reactionEvent({ user: id(p), reaction, channel: SLACK.channel, ts: card(thread), itemUser: SLACK.bot }), { timestamp: sec() }));
  let seen = 0;
  const label = (channel: string, t: string): string => {
    const i = cards().indexOf(t);
    if (i >= 0) return `card ${i + 1}`;
    const m = s.message(channel, t);
    const root = m?.thread_ts ? cards().indexOf(m.thread_ts) + 1 : 0;
    return root > 0 ? `thread ${root}` : `message ${t}`;
  };
  const render = (r: SlackFakeRequest): string | undefined => {
    const b = r.body;
    const body = (x: { text?: unknown; blocks?: unknown }): string => indent(slackMessageText(x, SLACK_NAMES));
    switch (r.method) {
      case 'chat.postMessage': {
        const root = typeof b['thread_ts'] === 'string' ? cards().indexOf(b['thread_ts']) + 1 : 0;
        return `${root > 0 ? `reply in thread ${root}` : `new card in #${String(b['channel'])}`}:\n${body(b)}`;
      }
      case 'chat.update':
        return `${label(String(b['channel']), String(b['ts']))} edited to:\n${body(b)}`;
      case 'chat.postEphemeral':
        return `only ${SLACK_NAMES[String(b['user'])] ?? String(b['user'])} sees:\n${body(b)}`;
      case 'response_url':
        return `${b['response_type'] === 'in_channel' ? 'everyone' : 'only the person'} sees:\n${body(b)}`;
      case 'chat.delete':
        return `${label(String(b['channel']), String(b['ts']))} deleted`;
      default:
        return undefined;
    }
  };
  return {
    ack: async (p, t) => {
      await react(p, t, 'eyes');
      return `${p.name} reacts 👀 on card ${t}`;
    },
    typedAck: async (p, t) => {
      // No mention: a plain thread reply (a `message` event) counts as `ack` in the bot's thread.
      await send(s.signed.event(messageEvent({ user: id(p), text: 'ack', channel: SLACK.channel, ts: ts(), threadTs: card(t) }), { timestamp: sec() }));
      return `${p.name} replies in thread ${t}: ack`;
    },
    say: async (p, t, text) => {
      const typed = `<@${SLACK.bot}> ${text}`;
      await send(s.signed.event(appMentionEvent({ user: id(p), text: typed, channel: SLACK.channel, ts: ts(), threadTs: card(t) }), { timestamp: sec() }));
      return `${p.name} writes in thread ${t}: @reprise ${text.replace(/<@(\w+)>/g, (_m, u: string) => `@${SLACK_NAMES[u] ?? u}`)}`;
    },
    voteDown: async (p, t) => {
      await react(p, t, '-1');
      return `${p.name} reacts 👎 on card ${t}`;
    },
    silence: async (p, t, duration) => {
      const m = s.message(SLACK.channel, card(t))!;
      const latest = m.updates.at(-1) ?? m;
      const actions = (latest.blocks as Array<Record<string, unknown>>).find((x) => x['type'] === 'actions')!;
      await send(
        s.signed.action(
          { messageTs: card(t), actionId: 'reprise_silence', blockId: String(actions['block_id']), selected: duration, user: id(p), channel: SLACK.channel },
          { timestamp: sec() },
        ),
      );
      return `${p.name} picks 🔕 Silence ${duration} on card ${t}`;
    },
    command: async (p, text) => {
      await send(s.signed.command({ text, user: id(p), channel: SLACK.channel }, { timestamp: sec() }));
      return `${p.name} types: /reprise ${text}`;
    },
    mention: (p) => `<@${id(p)}>`,
    shown: () => {
      const out = s.requests.slice(seen).flatMap((r) => render(r) ?? []);
      seen = s.requests.length;
      return out;
    },
  };
}

function matrixDriver(w: World): Driver {
  const m = w.matrix!;
  const who = (p: Person): string => MATRIX[p.name];
  const rel = (x: RecordedSend): { rel_type?: string; event_id?: string } => (x.content['m.relates_to'] ?? {}) as { rel_type?: string; event_id?: string };
  const bot = (): RecordedSend[] => m.sent.filter((x) => !x.replay && x.room === MATRIX.room && x.type === 'm.room.message');
  const cards = (): string[] =>
    bot()
      .filter((x) => rel(x).rel_type === undefined && !x.content['m.relates_to'])
      .map((x) => x.eventId);
  const card = (i: number): string => cards()[i - 1] ?? '';
  let seen = 0;
  const label = (eventId: string | undefined): string => {
    const i = cards().indexOf(eventId ?? '');
    return i >= 0 ? `${i + 1}` : `?`;
  };
  const render = (x: RecordedSend): string | undefined => {
    if (x.replay || x.room !== MATRIX.room) return undefined;
    if (x.type === 'm.room.redaction') return `a message was redacted`;
    if (x.type !== 'm.room.message') return undefined;
    const r = rel(x);
    const content = r.rel_type === 'm.replace' ? ((x.content['m.new_content'] ?? x.content) as Record<string, unknown>) : x.content;
    const head =
      r.rel_type === 'm.replace'
        ? `card ${label(r.event_id)} edited to`
        : r.rel_type === 'm.thread'
          ? `reply in thread ${label(r.event_id)}`
          : x.content['m.relates_to']
            ? 'a reply'
            : 'new card';
    return `${head}:\n${indent(matrixMessageText(content))}`;
  };
  return {
    ack: async (p, t) => {
      m.react(MATRIX.room, who(p), card(t), '👀');
      return `${p.name} reacts 👀 on card ${t}`;
    },
    typedAck: async (p, t) => {
      m.replyInThread(MATRIX.room, who(p), card(t), '!reprise ack');
      return `${p.name} writes in thread ${t}: !reprise ack`;
    },
    say: async (p, t, text) => {
      m.replyInThread(MATRIX.room, who(p), card(t), `!reprise ${text}`);
      return `${p.name} writes in thread ${t}: !reprise ${text}`;
    },
    voteDown: async (p, t) => {
      m.react(MATRIX.room, who(p), card(t), '👎');
      return `${p.name} reacts 👎 on card ${t}`;
    },
    silence: async (p, t, duration) => {
      m.replyInThread(MATRIX.room, who(p), card(t), `!reprise silence ${duration}`);
      return `${p.name} writes in thread ${t}: !reprise silence ${duration}`;
    },
    command: async (p, text) => {
      m.say(MATRIX.room, who(p), `!reprise ${text}`);
      return `${p.name} writes in the room: !reprise ${text}`;
    },
    mention: (p) => who(p),
    shown: () => {
      const out = m.sent.slice(seen).flatMap((x) => render(x) ?? []);
      seen = m.sent.length;
      return out;
    },
  };
}

function mattermostDriver(w: World): Driver {
  const m = w.mattermost!;
  const channel = m.channels.payments;
  const who = (p: Person): string => m.users[p.name].id;
  const names = new Map(Object.values(m.users).map((u) => [u.id, u.username]));
  const cards = (): string[] => m.roots(channel).map((p) => p.id);
  const card = (i: number): string => cards()[i - 1] ?? '';
  const label = (postId: string): string => {
    const i = cards().indexOf(postId);
    return i >= 0 ? `${i + 1}` : '?';
  };
  let seen = 0;
  const render = (r: (typeof m.requests)[number]): string | undefined => {
    const b = (r.body ?? {}) as Record<string, unknown>;
    const text = (message: unknown, props?: unknown): string => indent(mattermostPostText(String(message ?? ''), props as Record<string, unknown> | undefined));
    if (r.method === 'POST' && r.path === '/api/v4/posts' && r.status === 201) {
      const root = String(b['root_id'] ?? '');
      const where = String(b['channel_id']) === channel ? '~payments' : `~${String(b['channel_id'])}`;
      return `${root ? `reply in thread ${label(root)}` : `new post in ${where}`}:\n${text(b['message'], b['props'])}`;
    }
    const patch = /^\/api\/v4\/posts\/([a-z0-9]+)\/patch$/.exec(r.path);
    if (r.method === 'PUT' && patch && r.status === 200) return `card ${label(patch[1]!)} edited to:\n${text(b['message'], m.post(patch[1]!)?.props)}`;
    if (r.method === 'POST' && r.path === '/api/v4/posts/ephemeral') {
      const post = (b['post'] ?? {}) as Record<string, unknown>;
      return `only ${names.get(String(b['user_id'])) ?? String(b['user_id'])} sees${post['root_id'] ? ` (in thread ${label(String(post['root_id']))})` : ''}:\n${text(post['message'])}`;
    }
    if (r.method === 'DELETE') return `a post was deleted`;
    return undefined;
  };
  return {
    ack: async (p, t) => {
      m.react(who(p), card(t), 'eyes');
      return `${p.name} reacts 👀 on card ${t}`;
    },
    typedAck: async (p, t) => {
      m.say(channel, who(p), '@reprise ack', card(t));
      return `${p.name} writes in thread ${t}: @reprise ack`;
    },
    say: async (p, t, text) => {
      m.say(channel, who(p), `@reprise ${text}`, card(t));
      return `${p.name} writes in thread ${t}: @reprise ${text}`;
    },
    voteDown: async (p, t) => {
      m.react(who(p), card(t), '-1');
      return `${p.name} reacts 👎 on card ${t}`;
    },
    silence: async (p, t, duration) => {
      m.say(channel, who(p), `@reprise silence ${duration}`, card(t));
      return `${p.name} writes in thread ${t}: @reprise silence ${duration}`;
    },
    command: async (p, text) => {
      m.say(channel, who(p), `@reprise ${text}`);
      return `${p.name} writes in ~payments: @reprise ${text}`;
    },
    mention: (p) => `@${p.name}`,
    shown: () => {
      const out = m.requests.slice(seen).flatMap((r) => render(r) ?? []);
      seen = m.requests.length;
      return out;
    },
  };
}

/** The console: people act through the CLI (its human output is what they read back). */
function consoleDriver(w: World, cliLog: string[]): Driver {
  let seen = 0;
  const run = async (p: Person, argv: string[], asUser = true): Promise<string> => {
    const typed = `reprise ${argv.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}${asUser ? ` --user ${p.name}` : ''}`;
    const r = await w.cli(asUser ? [...argv, '--user', p.name] : argv);
    cliLog.push(`── ${hhmm(w.clock.now())} ${p.name}$ ${typed}   (exit ${r.code})`, indent(`${r.stdout}${r.stderr}`.trimEnd()), '');
    return `${p.name} runs: ${typed}`;
  };
  return {
    ack: (p) => run(p, ['ack', TRIGGER_WORDS]),
    typedAck: (p) => run(p, ['ack', TRIGGER_WORDS]),
    say: (p, _t, text) => {
      const [word, ...rest] = text.split(' ');
      if (word === 'note:') return run(p, ['note', TRIGGER_WORDS, rest.join(' ')]);
      if (word === 'fixed:') return run(p, ['fixed', TRIGGER_WORDS, rest.join(' ')]);
      if (word === 'postmortem') return run(p, ['postmortem', TRIGGER_WORDS]);
      return Promise.resolve(`${p.name} asks (the console has no way to ask a question): ${text}`);
    },
    voteDown: (p) => run(p, ['feedback', TRIGGER_WORDS, 'down']),
    silence: (p, _t, duration) => run(p, ['feedback', TRIGGER_WORDS, 'silence', duration]),
    command: (p, text) => {
      const [word, ...rest] = text.split(' ');
      if (word === 'status' && rest.length > 0) return run(p, ['incident', 'show', ...rest], false);
      return Promise.resolve(`${p.name} wants "${text}" (the console has no such command)`);
    },
    mention: (p) => `@${p.name}`,
    shown: () => {
      const text = w.stdout().slice(seen);
      seen = w.stdout().length;
      return text.trim() === '' ? [] : [text.trim().replace(/console-[0-9a-z]+-/g, 'console-RUN-')];
    },
  };
}

const indent = (t: string): string =>
  t
    .split('\n')
    .map((l) => (l === '' ? '  │' : `  │ ${l}`))
    .join('\n');

/** Plays the shift on `surface` and returns what people read. */
export async function playShift(surface: Surface): Promise<ShiftText> {
  const w = await startWorld(surface, '2026-11-29T03:07:00Z');
  const out: string[] = [];
  const cliLog: string[] = [];
  try {
    const d =
      surface === 'slack' ? slackDriver(w) : surface === 'matrix' ? matrixDriver(w) : surface === 'mattermost' ? mattermostDriver(w) : consoleDriver(w, cliLog);
    d.shown(); // nothing before the shift starts
    const step = async (what: string | Promise<string>, wait?: () => unknown): Promise<void> => {
      const said = await what;
      await settle(w);
      if (wait) await waitFor(wait, { what: `after: ${said}`, timeoutMs: 30_000 });
      await settle(w);
      out.push(`── ${hhmm(w.clock.now())} ${said}`, ...d.shown(), '');
    };
    const at = (t: string): void => w.clock.set(`2026-11-29T${t}:00Z`);
    const alert = async (label: string, body: Record<string, unknown>): Promise<string> => {
      const r = await fetch(`${w.url}/webhook/alertmanager`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (r.status !== 202) throw new Error(`webhook answered ${r.status}: ${await r.text()}`);
      return `Alertmanager: ${label}`;
    };
    const ann: Person = { name: 'ann' };
    const bob: Person = { name: 'bob' };
    const pulls = (label: string) => () => w.github.pulls().find((p) => p.labels.includes(label));

    // Occurrence 1: fired at 03:00, Reprise hears of it at 03:07 (Alertmanager's group_wait and a slow rule).
    await step(
      alert('KubePodCrashLooping firing for logging/log-router (startsAt 03:00)', webhook('firing', [alertOf(POD[0]!, 'firing', '2026-11-29T03:00:00Z')])),
    );
    at('03:09');
    await step(d.ack(ann, 1));
    at('03:10');
    await step(d.say(bob, 1, 'what changed on log-router recently?'));
    at('03:12');
    await step(d.say(bob, 1, 'note: the log-router pods restart every ~90s; node-7 has /var at 97%'));
    at('03:14');
    const fix = `fixed: vacuumed the journal with \`journalctl --vacuum-size=500M\`, set LOG_LEVEL=info and max_buffer_size=64MB (see https://wiki.example.com/logging/journal-full), thanks ${d.mention(bob)}`;
    await step(d.say(ann, 1, fix), pulls('human-fix'));
    at('03:22');
    await step(alert('resolved (endsAt 03:21)', webhook('resolved', [alertOf(POD[0]!, 'resolved', '2026-11-29T03:00:00Z', '2026-11-29T03:21:00Z')])));

    // Occurrence 2: two pods at once (one group), before the fix entry is merged.
    at('04:31');
    await step(
      alert(
        'KubePodCrashLooping firing for two log-router pods in one group (startsAt 04:25 and 04:27)',
        webhook('firing', [alertOf(POD[1]!, 'firing', '2026-11-29T04:25:00Z'), alertOf(POD[2]!, 'firing', '2026-11-29T04:27:00Z')]),
      ),
    );
    // Acknowledged 8 min after the group's first alert fired (04:25), 2 min after Reprise posted it.
    at('04:33');
    await step(d.typedAck(bob, 2));
    at('04:48');
    await step(
      alert(
        'both resolved (endsAt 04:40 and 04:46)',
        webhook('resolved', [
          alertOf(POD[1]!, 'resolved', '2026-11-29T04:25:00Z', '2026-11-29T04:40:00Z'),
          alertOf(POD[2]!, 'resolved', '2026-11-29T04:27:00Z', '2026-11-29T04:46:00Z'),
        ]),
      ),
    );

    // The fix entry is merged; the bot syncs the catalog.
    at('05:00');
    const pr = w.github.pulls().find((p) => p.labels.includes('human-fix'))!;
    await w.remote.merge(pr.head);
    w.github.merge(pr.number);
    const sync = await w.cli(['catalog', 'sync']);
    if (sync.code !== 0) throw new Error(`catalog sync failed: ${sync.stderr}`);
    await step(
      Promise.resolve(
        `the fix entry's PR #${pr.number} is merged; reprise catalog sync → ${sync.stdout
          .trim()
          .split('\n')[0]
          ?.replace(/[0-9a-f]{7,40}/g, '<sha>')}`,
      ),
    );

    // Occurrence 3: recalled at once.
    at('06:03');
    await step(
      alert('KubePodCrashLooping firing for logging/log-router (startsAt 06:00)', webhook('firing', [alertOf(POD[3]!, 'firing', '2026-11-29T06:00:00Z')])),
    );
    at('06:05');
    await step(d.voteDown(bob, 3));
    at('06:06');
    await step(d.silence(ann, 3, '4h'));
    at('06:08');
    await step(d.say(ann, 3, 'postmortem'), pulls('postmortem'));
    at('06:09');
    await step(d.command(ann, 'status'));
    at('06:10');
    await step(d.command(ann, `status ${TRIGGER_WORDS}`));
    // Ann judges the recalled answer off-base after all: a 👎 ends the silence, and the card says it pages again.
    at('06:12');
    await step(d.voteDown(ann, 3));
    at('06:20');
    await step(alert('resolved (endsAt 06:19)', webhook('resolved', [alertOf(POD[3]!, 'resolved', '2026-11-29T06:00:00Z', '2026-11-29T06:19:00Z')])));
    // A different fix after the merge: it edits the entry (its "What has fixed it" list) through a PR, not a new entry.
    at('06:24');
    await step(d.say(bob, 3, 'fixed: cordoned node-7 and moved log-router off it until `/var` was resized'), () =>
      w.github.pulls().find((p) => p.head.startsWith('reprise/amend/')),
    );

    // What the PRs say (a reviewer reads them on the forge).
    const pm = w.github.pulls().find((p) => p.labels.includes('postmortem'));
    if (pm) {
      const file = (await w.remote.show(pm.head, `postmortems/${pm.head.slice('reprise/postmortem/'.length)}.md`)) ?? '(no file on the branch)';
      out.push(`── the postmortem PR #${pm.number}: ${pm.title}`, indent(file.trimEnd()), '');
    }
    const amend = w.github.pulls().find((p) => p.head.startsWith('reprise/amend/'));
    if (amend) {
      const path = `${amend.head.slice('reprise/amend/'.length)}.md`;
      const file = (await w.remote.show(amend.head, path)) ?? '(no file on the branch)';
      out.push(`── the PR #${amend.number} that edits the entry: ${amend.title}`, indent(file.trimEnd()), '');
    }
    // The timeline as the CLI prints it.
    const shown = await w.cli(['incident', 'show', TRIGGER_WORDS]);
    cliLog.push(
      `── ${hhmm(w.clock.now())} after the shift$ reprise incident show ${TRIGGER_WORDS}   (exit ${shown.code})`,
      indent(`${shown.stdout}${shown.stderr}`.trimEnd()),
      '',
    );
    const ui = surface === 'slack' ? await uiText(w) : undefined;
    const fixed = stableIds();
    return { chat: fixed(`${out.join('\n').trimEnd()}\n`), cli: fixed(`${cliLog.join('\n').trimEnd()}\n`), ...(ui ? { ui: fixed(ui) } : {}) };
  } finally {
    await w.close();
  }
}

/**
 * Ids the stand-ins and the store draw at random (open ids, Slack `ts`, Matrix event ids) as
 * `<open-1>`, `<ts-1>`, `<event-1>`, numbered by first appearance, so a run reads the same every
 * time and the same id stays the same name across files.
 */
function stableIds(): (text: string) => string {
  const seen = new Map<string, string>();
  const count: Record<string, number> = {};
  const name =
    (kind: string) =>
    (id: string): string => {
      let n = seen.get(id);
      if (!n) {
        count[kind] = (count[kind] ?? 0) + 1;
        n = `<${kind}-${count[kind]}>`;
        seen.set(id, n);
      }
      return n;
    };
  return (text) =>
    text
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, name('open'))
      .replace(/\b\d{10}\.\d{6}\b/g, name('ts'))
      .replace(/\$[A-Za-z0-9_-]{8,}(?::[a-z0-9.]+)?/g, name('event'))
      // Mattermost ids (posts, users, channels): 26 letters and digits.
      .replace(/\b[0-9a-f]{26}\b/g, name('id'))
      .replace(/\(pid \d+\)/g, '(pid <pid>)');
}

/** The `/ui` pages an on-call lead opens after the shift, as text. */
async function uiText(w: World): Promise<string> {
  const page = async (path: string): Promise<string> => {
    const r = await fetch(`${w.url}${path}`);
    const html = await r.text();
    const text = convert(html, {
      wordwrap: 110,
      selectors: [
        { selector: 'a', format: 'inlineSurround', options: { prefix: '[', suffix: ']' } },
        { selector: 'img', format: 'skip' },
        { selector: 'svg', format: 'skip' },
        { selector: 'table', format: 'dataTable', options: { maxColumnWidth: 48 } },
      ],
    });
    return `── GET ${path} (${r.status})\n${indent(text.trim())}\n`;
  };
  const first = await fetch(`${w.url}/ui/incidents`);
  const links = [...(await first.text()).matchAll(/href="(\/ui\/(?:incidents|knowledge)\/[^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
  const parts = [await page('/ui'), await page('/ui/incidents')];
  for (const l of [...new Set(links)].slice(0, 2)) parts.push(await page(l));
  return parts.join('\n');
}
