/**
 * Issue 20 "Done when": a 6,000-event Matrix batch re-read after a failed lookup or a kill -9
 * mid-batch records each event once. The receiver remembers 5,000 delivered ids; past that only
 * the ledger knows what was applied. `reprise serve` against the homeserver stand-in: one `/sync`
 * answer carrying 6,000 events on an RCA thread — votes on the card and on its analysis, notes
 * and silences in the thread — whose processing is cut (1) by one failed event lookup
 * (`GET /rooms/{room}/event/{id}` answered 500: the batch is read again) and (2) by `kill -9` of
 * the bot mid-batch (the next process reads it again from the last position). Afterwards every
 * event id is in the ledger once, and every note and silence was answered once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startMatrixFake, type MatrixFake, type RecordedSend } from '../fakes/matrix-homeserver.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { ledgerEvents, until, writeConfig, type LedgerRow } from './helpers/chat-e2e.js';
import { childEnv, cleanup, MAIN_JS, makeTmpDir, REPO_ROOT, spawnBot, type BotProcess } from './helpers/spawn-bot.js';

const ALICE = '@alice:fake.test';
const BOB = '@bob:fake.test';
const BATCH = 6_000;
const NOTES = 10;
const SILENCES = 5;
/** Votes on the card first, then on the analysis: the analysis's sender is forgotten by then (5,000 remembered) and looked up. */
const CARD_VOTES = 5_600;
/** People in the room (a reaction is one per person, key and message): joined before the bot starts. */
const PEOPLE = 3_000;
const person = (n: number): string => `@p${n % PEOPLE}:fake.test`;
/** Everyone in the room may vote (the default). */
const CONFIG = `transport:\n  matrix: {}\n`;

let fake: MatrixFake | undefined;
const raw: ChildProcess[] = [];
afterEach(async () => {
  for (const c of raw.splice(0)) {
    c.kill('SIGKILL');
    if (c.exitCode === null && c.signalCode === null) await new Promise((r) => c.once('exit', r));
  }
  await cleanup();
  await fake?.close();
  fake = undefined;
});

type Relation = { rel_type?: string; event_id?: string };
const relation = (s: RecordedSend): Relation => (s.content['m.relates_to'] ?? {}) as Relation;
const body = (s: RecordedSend): string => String(s.content['body'] ?? '');

async function startFake(): Promise<MatrixFake> {
  const m = await startMatrixFake();
  for (let n = 0; n < PEOPLE; n++) m.join(m.room, person(n));
  return m;
}

async function start(m: MatrixFake, dataDir: string, opts: { process?: boolean } = {}): Promise<BotProcess> {
  const bot = await spawnBot({
    ...opts,
    dataDir,
    args: ['--config', writeConfig(dataDir, CONFIG)],
    env: { MATRIX_HOMESERVER_URL: m.url, MATRIX_ACCESS_TOKEN: m.botToken, MATRIX_ROOM_ID: m.room },
  });
  await bot.waitForLog((l) => l.msg === 'matrix: syncing', 20_000);
  return bot;
}

/** A card and its analysis in the room, then the 6,000 events injected at once (one sync answer). */
async function batch(m: MatrixFake, bot: BotProcess): Promise<{ ids: string[]; notes: string[]; silences: string[]; card: string }> {
  expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
  const fresh = (): RecordedSend[] => m.sent.filter((s) => !s.replay && s.type === 'm.room.message');
  const card = await until('the card', () => fresh().find((s) => relation(s).rel_type === undefined));
  const analysis = await until('the analysis', () => fresh().find((s) => relation(s).rel_type === 'm.thread' && relation(s).event_id === card.eventId));
  m.setBehaviour({ timelineLimit: BATCH + 100 });
  const ids: string[] = [];
  const notes: string[] = [];
  const silences: string[] = [];
  const who = (n: number): string => (n % 2 === 0 ? ALICE : BOB);
  const half = CARD_VOTES / 2;
  // Synchronously: every event lands before the long-polling sync is answered.
  for (let n = 0; n < BATCH; n++) {
    if (n % 600 === 300 && notes.length < NOTES) {
      const id = m.replyInThread(m.room, who(n), card.eventId, `!reprise note batch note ${notes.length + 1}`);
      notes.push(id);
      ids.push(id);
    } else if (n % 1200 === 600 && silences.length < SILENCES) {
      const id = m.react(m.room, person(PEOPLE - 1 - silences.length), card.eventId, '🔕');
      silences.push(id);
      ids.push(id);
    } else {
      // Each person 👍 then 👎 the card, then 👍 the analysis: one reaction per person, key and message.
      ids.push(n < CARD_VOTES ? m.react(m.room, person(n % half), card.eventId, n < half ? '👍' : '👎') : m.react(m.room, person(n), analysis.eventId, '👍'));
    }
  }
  return { ids, notes, silences, card: card.eventId };
}

/** Chat events a bot process applied, counted in its log (its stderr). */
const applied = (stderr: string): number => stderr.match(/"msg":"(?:feedback|silence|note) recorded"/g)?.length ?? 0;

/** How long the count may stand still before the wait fails: the bot stopped, not a slow machine. */
const STALL_MS = 90_000;

/**
 * Waits until `count()` reaches `n`, for as long as the work moves (`moving`, default the count
 * itself, keeps changing; polled every `everyMs`, 250 ms for a count of log lines — a ledger read
 * costs more and is polled every second: the test shares the two cores with the bot); fails once
 * it stood still for {@link STALL_MS}. A loaded machine is slower, never wrong: only a stall is.
 */
async function waitApplied(count: () => number | Promise<number>, n: number, what = 'events applied', moving?: () => number, everyMs = 250): Promise<void> {
  let last: number | undefined;
  let movedAt = Date.now();
  for (let got = await count(); got < n; got = await count()) {
    const now = moving ? moving() : got;
    if (now !== last) [last, movedAt] = [now, Date.now()];
    else if (Date.now() - movedAt > STALL_MS) throw new Error(`only ${got} of ${n} ${what}, and nothing moved for ${STALL_MS} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * `reprise serve` without waiting for it to listen: after a crash mid-batch, the restarted
 * process reads the whole batch again before it prints its port.
 */
function serveRaw(m: MatrixFake, dataDir: string): { stderr: () => string } {
  const child = spawn(process.execPath, [MAIN_JS, 'serve', '--port', '0', '--host', '127.0.0.1', '--config', join(dataDir, 'reprise.yaml')], {
    cwd: REPO_ROOT,
    env: childEnv({
      REPRISE_DATA_DIR: dataDir,
      REPRISE_LOG_LEVEL: 'info',
      MATRIX_HOMESERVER_URL: m.url,
      MATRIX_ACCESS_TOKEN: m.botToken,
      MATRIX_ROOM_ID: m.room,
    }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  raw.push(child);
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  return { stderr: () => err };
}

/** Each event id in the ledger exactly once (count per id), and every note and silence answered once. */
async function expectOnce(
  m: MatrixFake,
  dataDir: string,
  appliedSoFar: () => number,
  b: { ids: string[]; notes: string[]; silences: string[]; card: string },
  /** The bot's warnings and errors, said when an event is not recorded once. */
  problems: () => string = () => '',
): Promise<void> {
  // Near the end by the bots' logs (a line a killed process had not flushed is missing there),
  // then the ledger is the truth.
  await waitApplied(appliedSoFar, BATCH - 100);
  const inLedger = async (): Promise<LedgerRow[]> => (await ledgerEvents(dataDir)).filter((e) => typeof e['eventId'] === 'string');
  let rows = await inLedger();
  // What is missing is asserted, id by id, below.
  // A read can fail while the restarted bot is still taking its store (the CLI finds it locked, its
  // control socket not up yet): that poll is read again, never judged on the rows read before it.
  let readError: unknown;
  const ids = async (): Promise<number> => {
    try {
      rows = await inLedger();
      readError = undefined;
    } catch (err) {
      readError = err;
      return -1;
    }
    return new Set(rows.map((e) => e['eventId'])).size;
  };
  // Only a stall (nothing moved for STALL_MS) ends this wait early; what is missing is then asserted below.
  await waitApplied(ids, BATCH, 'event ids in the ledger', () => rows.length, 1000).catch(() => undefined);
  if (readError !== undefined) rows = await inLedger();
  const count = new Map<string, number>();
  for (const r of rows) count.set(String(r['eventId']), (count.get(String(r['eventId'])) ?? 0) + 1);
  // Each as `id×times` (0: lost, 2: applied twice), so a failure says which way it went — and
  // what the ledger holds besides the batch's ids, with the rows of a lost id's neighbours.
  const batchIds = new Set(b.ids);
  const foreign = rows.filter((r) => !batchIds.has(String(r['eventId']))).slice(0, 5);
  const wrong = b.ids.filter((id) => count.get(id) !== 1);
  const near = wrong.slice(0, 1).flatMap((id) => {
    const i = b.ids.indexOf(id);
    return rows.filter((r) => [b.ids[i - 1], b.ids[i + 1]].includes(String(r['eventId'])));
  });
  expect(
    wrong.slice(0, 5).map((id) => `${id}×${count.get(id) ?? 0} (event ${b.ids.indexOf(id)} of the batch)`),
    `events not recorded exactly once (${rows.length} rows; not of the batch: ${JSON.stringify(foreign)}; the lost one's neighbours: ${JSON.stringify(near)}; the bot's warnings: ${problems().slice(-4000)})`,
  ).toEqual([]);
  expect(rows).toHaveLength(BATCH);
  const thread = (): RecordedSend[] =>
    m.sent.filter((s) => !s.replay && s.type === 'm.room.message' && relation(s).rel_type === 'm.thread' && relation(s).event_id === b.card);
  // Answers wait in the thread's lane behind the card's edits: the bot is moving while it sends anything.
  await waitApplied(
    () => thread().filter((s) => body(s).includes('saved — note from')).length,
    NOTES,
    'notes answered',
    () => m.sent.length,
  );
  // Each note is recorded once (above), and its answer is recorded with it: no second one can come.
  expect(thread().filter((s) => body(s).includes('saved — note from'))).toHaveLength(NOTES);
  expect(thread().filter((s) => /silenced by/.test(body(s))).length).toBeLessThanOrEqual(SILENCES);
}

describe('a 6,000-event Matrix batch read again records each event once', () => {
  it('after one failed event lookup mid-batch (the batch is read again from its start)', { timeout: 900_000 }, async () => {
    fake = await startFake();
    const dataDir = makeTmpDir();
    const bot = await start(fake, dataDir);
    const b = await batch(fake, bot);
    // The first vote on the analysis needs its sender (forgotten by then): that lookup fails once.
    fake.setBehaviour({ failEndpoint: { endpoint: /^GET \/rooms\/[^/]+\/event\//, times: 1, status: 500, errcode: 'M_UNKNOWN' } });
    const warnings = (): string =>
      JSON.stringify(
        bot
          .logs()
          .filter((l) => (l.level ?? 0) >= 40)
          .slice(-30),
      );
    await expectOnce(fake, dataDir, () => applied(bot.stderr()), b, warnings);
    expect(fake.requests.filter((r) => /\/event\//.test(r.path) && r.status === 500)).toHaveLength(1);
    expect(bot.logs().some((l) => l.msg === 'matrix: sync failed; retrying from the last handled position')).toBe(true);
  });

  it('after kill -9 of the bot mid-batch (the next process reads it again)', { timeout: 900_000 }, async () => {
    fake = await startFake();
    const dataDir = makeTmpDir();
    const first = await start(fake, dataDir, { process: true }); // killed below
    const b = await batch(fake, first);
    await waitApplied(() => applied(first.stderr()), 1500);
    await first.kill();
    const before = applied(first.stderr());
    expect(before).toBeLessThan(BATCH); // cut mid-batch
    const second = serveRaw(fake, dataDir);
    await expectOnce(
      fake,
      dataDir,
      () => before + applied(second.stderr()),
      b,
      () =>
        second
          .stderr()
          .split('\n')
          .filter((l) => /"level":(4|5)0/.test(l))
          .slice(-30)
          .join('\n'),
    );
  });
});
