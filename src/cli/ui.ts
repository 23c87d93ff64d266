/**
 * `reprise ui sessions`: the memory view's signed-in sessions (issue 29 item 6) — listed, or
 * revoked one by one (`revoke <id>`) or all at once (`revoke --all`). Through the running bot's
 * control socket when one owns the store; directly on the store otherwise (under its lock).
 */
import { openStore } from '../runtime/open-store.js';
import type { Config } from '../config/schema.js';
import { answerSessions, UiSessions, type SessionsRequest, type SessionSummary } from '../http/ui/ui-sessions.js';
import { systemClock } from '../ports/clock.js';
import { askOwner, withStoreLock } from '../runtime/owner-or-direct.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand, CliIO } from '../runtime/cli-io.js';

const USAGE = `reprise ui sessions [--json] [--config FILE]
reprise ui sessions revoke <id> | --all [--config FILE]

Lists the memory view's signed-in sessions (each sign-in at /ui/login is one: its id, when it
signed in, last used, when it lapses, from where), or revokes one by the id listed (a unique
start of it is enough) or every one: its browser is refused at its next request and must sign
in again. Through the running bot when one owns the store; directly otherwise.`;

export function sessionsOf(config: Config, store: ConstructorParameters<typeof UiSessions>[0]): UiSessions {
  return new UiSessions(store, { idleMs: config.ui.session_idle_ms, maxMs: config.ui.session_max_ms });
}

function print(io: CliIO, req: SessionsRequest, list: SessionSummary[], json: boolean): void {
  if (json) return io.stdout(`${JSON.stringify({ sessions: list })}\n`);
  if (req.action === 'revoke') {
    io.stdout(
      list.length === 0 ? 'no session to revoke\n' : `revoked ${list.length} session${list.length === 1 ? '' : 's'}: ${list.map((s) => s.id).join(', ')}\n`,
    );
    return;
  }
  if (list.length === 0) return io.stdout('no signed-in sessions\n');
  for (const s of list)
    io.stdout(
      `${s.id}  signed in ${s.createdAt}  last used ${s.lastSeenAt}  lapses ${s.idleUntil < s.expiresAt ? s.idleUntil : s.expiresAt}${s.peer ? `  from ${s.peer}` : ''}${s.agent ? `  (${s.agent.slice(0, 60)})` : ''}\n`,
    );
}

export const uiCommand: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
      all: { type: 'boolean', description: 'revoke: every session' },
      json: { type: 'boolean', description: 'print JSON' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const [what, verb, id, extra] = parsed.positionals;
  const usage = (why: string): number => {
    io.stderr(`reprise ui: ${why}\nusage: ${USAGE.split('\n\n')[0]}\n`);
    return 2;
  };
  if (what !== 'sessions') return usage(what === undefined ? 'say `sessions`' : `unknown subcommand ${JSON.stringify(what)}`);
  let req: SessionsRequest;
  if (verb === undefined || verb === 'list') {
    if (parsed.values.all) return usage('--all goes with revoke');
    req = { action: 'list' };
  } else if (verb === 'revoke') {
    if (extra !== undefined) return usage(`unexpected argument ${JSON.stringify(extra)}`);
    if (parsed.values.all && id !== undefined) return usage('give a session id or --all, not both');
    if (parsed.values.all) req = { action: 'revoke', all: true };
    else if (id !== undefined) req = { action: 'revoke', id };
    else return usage('revoke needs a session id (as `reprise ui sessions` lists it) or --all');
  } else return usage(`unknown action ${JSON.stringify(verb)}: list or revoke`);
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  const json = parsed.values.json === true;
  const nothing = req.action === 'revoke' ? 'Nothing was revoked.' : 'Nothing was listed.';
  const fail = (err: unknown): number => {
    io.stderr(`reprise ui sessions: ${(err as Error).message}\n`);
    return 1;
  };
  const viaBot = await askOwner(config, io, { command: 'reprise ui sessions', route: '/v1/ui/sessions', body: req, nothing }, (status, body) => {
    const result = (body as { result?: { sessions?: SessionSummary[] }; error?: { message?: string } } | undefined) ?? {};
    if (status !== 200 || !result.result?.sessions) return fail(new Error(result.error?.message ?? `the bot answered ${status}`));
    print(io, req, result.result.sessions, json);
    return 0;
  });
  if (viaBot !== undefined) return viaBot;
  return withStoreLock(config, io, 'reprise ui sessions', nothing, async () => {
    const store = openStore(config, 'write');
    try {
      const { sessions } = await answerSessions(sessionsOf(config, store), req, systemClock.now());
      print(io, req, sessions, json);
      return 0;
    } catch (err) {
      return fail(err);
    } finally {
      await store.close();
    }
  });
};
