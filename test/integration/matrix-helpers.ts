/** Shared set-up for the Matrix integration tests: a memory store, a recording sink, polling. */
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import { createMatrixTransport, type MatrixTransportOptions } from '../../src/adapters/matrix/matrix-transport.js';
import type { ChatIntent } from '../../src/core/chat/chat-types.js';
import type { ChatTransport } from '../../src/ports/chat-transport.js';
import { silentLogger, type Logger } from '../../src/ports/logger.js';
import type { KeyValueStore } from '../../src/ports/store.js';
import type { MatrixFake } from '../fakes/matrix-homeserver.js';
import { waitFor } from '../helpers/wait-for.js';

export function memoryStore(): KeyValueStore {
  return createStore('memory://', '/nonexistent');
}

/** A logger that keeps warnings and errors, so tests can assert on what operators would read. */
export function recordingLogger(): Logger & { lines: Array<{ level: string; msg: string; obj: unknown }> } {
  const lines: Array<{ level: string; msg: string; obj: unknown }> = [];
  const make = (): Logger => ({
    debug: () => {},
    info: (obj, msg) => void lines.push({ level: 'info', msg: msg ?? String(obj), obj }),
    warn: (obj, msg) => void lines.push({ level: 'warn', msg: msg ?? String(obj), obj }),
    error: (obj, msg) => void lines.push({ level: 'error', msg: msg ?? String(obj), obj }),
    child: () => make(),
  });
  return Object.assign(make(), { lines });
}

export interface Harness {
  transport: ChatTransport;
  events: ChatIntent[];
}

/** Starts the real transport against `fake`; every event the sink accepted is in `events`. */
export async function startTransport(
  fake: MatrixFake,
  store: KeyValueStore,
  over: Partial<MatrixTransportOptions> & { sink?: (e: ChatIntent) => Promise<void> } = {},
): Promise<Harness> {
  const events: ChatIntent[] = [];
  const { sink, ...rest } = over;
  const transport = createMatrixTransport({
    homeserverUrl: fake.url,
    accessToken: fake.botToken,
    rooms: [fake.room],
    store,
    logger: silentLogger,
    syncTimeoutMs: 200,
    backoff: { initialMs: 50, maxMs: 200 },
    ...rest,
  });
  await transport.start(async (e) => {
    if (sink) await sink(e);
    events.push(e);
  });
  return { transport, events };
}

/** @deprecated Use `waitFor(check, { what, timeoutMs })` from test/helpers/wait-for.ts (kept for branches not yet merged). */
export const until = <T>(check: () => T | undefined | false, ms?: number, what = 'condition'): Promise<T> => waitFor(check, what, ms);

export const ALICE = '@alice:fake.test';
export const BOB = '@bob:fake.test';
