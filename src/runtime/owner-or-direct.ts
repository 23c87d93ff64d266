/**
 * The running bot owns the store: a CLI command that writes goes through its control socket
 * when one answers, and writes directly only when no bot answers *and* the store lock can be
 * taken. A socket it may not open (a bot running as another user) or a lock held by someone
 * else is an error, never a reason to write anyway. Shared by `feedback`, `note` and `curate`.
 */
import { userInfo } from 'node:os';
import type { Config } from '../config/schema.js';
import { controlRequest } from './control-client.js';
import type { CliIO } from './cli-io.js';
import { readServeOwner, type ServeOwner } from './serve-owner.js';
import { lockStore, StoreLockedError } from './open-store.js';

/** The OS user running the CLI: who an action is recorded for unless --user says otherwise. */
export function osUser(io: CliIO): string {
  try {
    return userInfo().username;
  } catch {
    return io.env['USER'] ?? 'cli';
  }
}

export interface OwnerRequest {
  /** `reprise feedback`, … — prefixes every message. */
  command: string;
  route: string;
  body: unknown;
  timeoutMs?: number;
  /** What the user is told did not happen when the bot cannot be reached ("Nothing was recorded."). */
  nothing: string;
}

/**
 * Asks the bot that owns the store, if one does. Resolves with the exit status once the bot
 * answered (`answered` turns its reply into output), or `undefined` when no bot listens — the
 * caller may then write directly, under {@link withStoreLock}.
 */
export async function askOwner(
  config: Config,
  io: CliIO,
  req: OwnerRequest,
  answered: (status: number, body: unknown, owner: ServeOwner) => number,
): Promise<number | undefined> {
  const owner = readServeOwner(config.store.data_dir);
  if (!owner) return undefined;
  const reply = await controlRequest(owner.socket, 'POST', req.route, req.body, req.timeoutMs);
  if (reply.ok) return answered(reply.status, reply.body, owner);
  if (reply.reason === 'absent') return undefined; // the bot that wrote serve.json is gone
  io.stderr(
    `${req.command}: cannot reach the running bot (pid ${owner.pid}, user ${owner.user || '?'}) on ${owner.socket}: ${reply.message}. ` +
      `${reply.reason === 'denied' ? `Run the command as ${owner.user || 'the user running the bot'}.` : 'Check the bot is healthy.'} ${req.nothing}\n`,
  );
  return 1;
}

/** Runs `fn` holding the store's writer lock; a lock held elsewhere is a clear error (exit 1). */
export async function withStoreLock(config: Config, io: CliIO, command: string, nothing: string, fn: () => Promise<number>): Promise<number> {
  let lock;
  try {
    lock = lockStore(config, command);
  } catch (err) {
    if (err instanceof StoreLockedError) {
      io.stderr(`${err.message} Its control socket did not answer, so ${nothing.charAt(0).toLowerCase()}${nothing.slice(1)}\n`);
      return 1;
    }
    throw err;
  }
  try {
    return await fn();
  } finally {
    lock?.release();
  }
}
