/**
 * The local control API (SPEC §11): how `reprise feedback`, `note`, `catalog sync`, `curate`
 * and `doctor` reach the running bot so one process owns the store. A hono app like the public
 * port (same request ids, error bodies and error handler — http-app.ts), served on a Unix
 * socket created with mode 0600 — only the user running the bot (and root) can connect — and
 * never on the network. JSON in and out.
 */
import { RepriseError } from '../core/errors.js';
import type { Logger } from '../ports/logger.js';
import { createHttpApp, finishHttpApp, type HttpContext } from './http-app.js';
import { serveNode } from './node-server.js';
import { assertJsonContentType, decodeUtf8, parseJson, readRequestBody } from './read-body.js';

export { MAX_SOCKET_PATH } from './node-server.js';

/** Largest control request body: a note is 8 KiB; nothing the CLI sends comes near this. */
const BODY_LIMIT = 64 * 1024;

export interface ControlHandlers {
  /** `POST /v1/feedback`: a vote or silence on behalf of a CLI user. */
  feedback: (body: unknown) => Promise<unknown>;
  /** `GET /v1/status`: what the bot is and how it is doing. */
  status: () => Promise<unknown>;
  /** `POST /v1/catalog/sync`: fetch the catalog now; answers once the index is rebuilt. */
  catalogSync?: () => Promise<unknown>;
  /** `POST /v1/curate` `{apply}`: run the grooming sweeps now; answers with the report. */
  curate?: (body: unknown) => Promise<unknown>;
  /** `POST /v1/note`: an operator note on a trigger's newest thread (`reprise note`). */
  note?: (body: unknown) => Promise<unknown>;
  /** `POST /v1/fixed`: what fixed it, on a trigger's newest thread (`reprise fixed`). */
  fixed?: (body: unknown) => Promise<unknown>;
  /** `POST /v1/ack`: someone is on a trigger's newest thread (`reprise ack`). */
  ack?: (body: unknown) => Promise<unknown>;
  /** `POST /v1/postmortem`: a postmortem draft of a trigger's newest thread (`reprise postmortem`). */
  postmortem?: (body: unknown) => Promise<unknown>;
  /** `POST /v1/ui/sessions` `{action: list|revoke, id?|all?}`: the memory view's sessions (`reprise ui sessions`). */
  uiSessions?: (body: unknown) => Promise<unknown>;
}

export interface ControlServer {
  readonly path: string;
  close(): Promise<void>;
}

async function jsonBody(c: HttpContext): Promise<unknown> {
  assertJsonContentType(c.req.header('content-type'));
  return parseJson(decodeUtf8(await readRequestBody(c, { limitBytes: BODY_LIMIT })));
}

/**
 * Listens on `path`. A socket file left by a crashed bot is replaced: callers hold the store
 * lock first, so no live bot can own it.
 * @throws Error when the path is too long for a Unix socket.
 */
export async function startControlServer(path: string, handlers: ControlHandlers, logger: Logger): Promise<ControlServer> {
  const log = logger.child({ component: 'control' });
  const { app, errorResponse } = createHttpApp({ logger: log });
  const answer = async (c: HttpContext, work: () => Promise<unknown>): Promise<Response> => c.json({ requestId: c.get('requestId'), result: await work() });
  const unavailable = (what: string) => (): never => {
    throw new RepriseError('not_found', `${what} is not available in this bot`);
  };

  app.post('/v1/feedback', async (c) => answer(c, async () => handlers.feedback(await jsonBody(c))));
  app.get('/v1/status', async (c) => answer(c, () => handlers.status()));
  app.post('/v1/catalog/sync', async (c) => answer(c, handlers.catalogSync ?? unavailable('catalog sync')));
  app.post('/v1/curate', async (c) => {
    const curate = handlers.curate ?? unavailable('grooming');
    return answer(c, async () => curate(await jsonBody(c)));
  });
  const note = handlers.note;
  if (note) app.post('/v1/note', async (c) => answer(c, async () => note(await jsonBody(c))));
  const fixed = handlers.fixed;
  if (fixed) app.post('/v1/fixed', async (c) => answer(c, async () => fixed(await jsonBody(c))));
  const ack = handlers.ack;
  if (ack) app.post('/v1/ack', async (c) => answer(c, async () => ack(await jsonBody(c))));
  const postmortem = handlers.postmortem;
  if (postmortem) app.post('/v1/postmortem', async (c) => answer(c, async () => postmortem(await jsonBody(c))));
  const uiSessions = handlers.uiSessions;
  if (uiSessions) app.post('/v1/ui/sessions', async (c) => answer(c, async () => uiSessions(await jsonBody(c))));
  finishHttpApp(app, errorResponse, {
    '/v1/feedback': 'POST',
    '/v1/status': 'GET',
    '/v1/catalog/sync': 'POST',
    '/v1/curate': 'POST',
    ...(note ? { '/v1/note': 'POST' } : {}),
    ...(fixed ? { '/v1/fixed': 'POST' } : {}),
    ...(ack ? { '/v1/ack': 'POST' } : {}),
    ...(postmortem ? { '/v1/postmortem': 'POST' } : {}),
    ...(uiSessions ? { '/v1/ui/sessions': 'POST' } : {}),
  });

  const node = serveNode(app, { logger: log });
  await node.listenSocket(path);
  log.info({ socket: path }, 'control socket listening');
  return { path, close: () => node.close({ force: true }) };
}
