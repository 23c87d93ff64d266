/**
 * The golden shift's world (issue 28 item 1): the real `startBot` in this process with a stepped
 * clock, the served catalog on a bare git remote, the GitHub stand-in on it, and one chat surface
 * (the Slack Web API stand-in over HTTP, the Matrix homeserver stand-in, the Mattermost stand-in, or the console). Every
 * input goes through a real entrance: the webhook port, signed Slack requests, Matrix `/sync`,
 * the CLI commands (in-process, through the bot's control socket), and `/ui` over HTTP.
 */
import { readFile } from 'node:fs/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCliConfig } from '../../src/cli/cli-config.js';
import type { CliCommand, CliIO } from '../../src/runtime/cli-io.js';
import { ManualClock } from '../../src/ports/clock.js';
import { createLogger } from '../../src/runtime/create-logger.js';
import { startBot, type RunningBot } from '../../src/runtime/start-bot.js';
import { createBareCatalogRepo, type BareCatalogRepo } from '../fakes/bare-catalog-repo.js';
import { startGitHubFake, type GitHubFake } from '../fakes/github-fake.js';
import { startMatrixFake, type MatrixFake } from '../fakes/matrix-homeserver.js';
import { startMattermostFake, type MattermostFake } from '../fakes/mattermost-server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack-fake.js';
import { waitFor } from '../helpers/wait-for.js';

export type Surface = 'slack' | 'matrix' | 'mattermost' | 'console';

export const REPO_ROOT = new URL('../../', import.meta.url).pathname;

/** A small starter catalog that knows nothing of the shift's workload: the first firing is no instant recall. */
const SEED = ['kubernetes/KubePodCrashLooping.md', 'incidents/redis-evictions-sessions-lost.md', 'concepts/alert-severity-policy.md'];

/** Slack ids and the names a Slack client shows for them (the stand-in's workspace). */
export const SLACK = { bot: 'U0REPRISE', ann: 'U0ANN', bob: 'U0BOB', channel: 'C0LOGGING' } as const;
export const SLACK_NAMES: Record<string, string> = { U0REPRISE: 'reprise', U0ANN: 'ann', U0BOB: 'bob' };
export const MATRIX = { ann: '@ann:fake.test', bob: '@bob:fake.test', room: '!logging:fake.test' } as const;
/** The profile display names the homeserver stand-in gives them (`GET /profile/{userId}`), as a client shows them. */
export const MATRIX_NAMES: Record<string, string> = { [MATRIX.ann]: 'Ann Example', [MATRIX.bob]: 'Bob Example' };

export interface World {
  surface: Surface;
  clock: ManualClock;
  dir: string;
  configFile: string;
  env: NodeJS.ProcessEnv;
  remote: BareCatalogRepo;
  github: GitHubFake;
  slack?: SlackFake;
  matrix?: MatrixFake;
  mattermost?: MattermostFake;
  running: RunningBot;
  url: string;
  /** What the bot printed on stdout (the console surface). */
  stdout(): string;
  /** Runs a CLI command in this process, as `reprise <argv>` would with the world's config. */
  cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

const COMMANDS: Record<string, () => Promise<CliCommand>> = {
  ack: async () => (await import('../../src/cli/ack.js')).ack,
  note: async () => (await import('../../src/cli/note.js')).note,
  fixed: async () => (await import('../../src/cli/fixed.js')).fixed,
  feedback: async () => (await import('../../src/cli/feedback.js')).feedback,
  postmortem: async () => (await import('../../src/cli/postmortem.js')).postmortem,
  incident: async () => (await import('../../src/cli/incident.js')).incident,
  catalog: async () => async (argv, io) => (await import('../../src/cli/catalog-sync.js')).catalogSync(argv.slice(1), io),
};

export async function startWorld(surface: Surface, start: string): Promise<World> {
  const seed: Record<string, string> = {};
  for (const p of SEED) seed[p] = await readFile(join(REPO_ROOT, 'catalog', p), 'utf8');
  const clock = new ManualClock(start);
  const remote = await createBareCatalogRepo(seed);
  const github = await startGitHubFake({ branchExists: async (b) => (await remote.branches()).includes(b), now: () => clock.now() });
  const dir = mkdtempSync(join(tmpdir(), `reprise-golden-${surface}-`));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    REPRISE_DATA_DIR: dir,
    REPRISE_LOG_LEVEL: 'warn',
  };
  const lines = [
    'catalog:',
    '  git:',
    `    url: ${JSON.stringify(remote.url)}`,
    '    poll_interval: 24h',
    'forge:',
    '  repo: acme/kb',
    '  token: test-token',
    `  api_url: ${github.url}`,
  ];
  let slack: SlackFake | undefined;
  let matrix: MatrixFake | undefined;
  let mattermost: MattermostFake | undefined;
  if (surface === 'slack') {
    // The workspace's people as users.info answers: where text cannot mention (PR bodies, /ui), the bot names them so.
    slack = await startSlackFake({
      botUserId: SLACK.bot,
      users: {
        [SLACK.ann]: { name: 'ann.example', realName: 'Ann Example', displayName: SLACK_NAMES[SLACK.ann]! },
        [SLACK.bob]: { name: 'bob.r', realName: 'Bob R', displayName: SLACK_NAMES[SLACK.bob]! },
      },
    });
    lines.push(
      'transport:',
      '  slack:',
      `    allow_users: [${SLACK.ann}, ${SLACK.bob}]`,
      'routing:',
      '  rules:',
      '    - match: { namespace: logging }',
      `      slack: ${SLACK.channel}`,
    );
    Object.assign(env, { SLACK_BOT_TOKEN: slack.botToken, SLACK_SIGNING_SECRET: slack.signingSecret, SLACK_CHANNEL: 'C0DEFAULT', SLACK_API_URL: slack.apiUrl });
  } else if (surface === 'matrix') {
    matrix = await startMatrixFake({ rooms: [{}, { id: MATRIX.room }], now: () => clock.now().getTime(), displayNames: MATRIX_NAMES });
    lines.push(
      'transport:',
      '  matrix:',
      `    allow_users: ['${MATRIX.ann}', '${MATRIX.bob}']`,
      'routing:',
      '  rules:',
      '    - match: { namespace: logging }',
      `      matrix: '${MATRIX.room}'`,
    );
    Object.assign(env, { MATRIX_HOMESERVER_URL: matrix.url, MATRIX_ACCESS_TOKEN: matrix.botToken, MATRIX_ROOM_ID: matrix.room });
  } else if (surface === 'mattermost') {
    mattermost = await startMattermostFake();
    lines.push(
      'transport:',
      '  mattermost:',
      `    allow_users: ['${mattermost.users.ann.id}', '${mattermost.users.bob.id}']`,
      'routing:',
      '  rules:',
      '    - match: { namespace: logging }',
      `      mattermost: '${mattermost.team}/payments'`,
    );
    Object.assign(env, { MATTERMOST_URL: mattermost.url, MATTERMOST_TOKEN: mattermost.botToken, MATTERMOST_CHANNEL: `${mattermost.team}/incidents` });
  }
  const configFile = join(dir, 'reprise.yaml');
  writeFileSync(configFile, `${lines.join('\n')}\n`);
  let out = '';
  const io: CliIO = { stdout: (t) => void (out += t), stderr: () => undefined, stdin: async () => '', env, cwd: dir };
  const loaded = loadCliConfig(configFile, io);
  if ('exit' in loaded) throw new Error(`the golden config did not load (exit ${loaded.exit})`);
  const { config } = loaded;
  config.server.port = 0;
  config.server.host = '127.0.0.1';
  const logger = createLogger({ level: 'warn', env, destination: { write: () => undefined } });
  const running = await startBot(config, io, logger, clock);
  const url = `http://127.0.0.1:${running.port}`;
  await waitFor(async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined), { what: 'the first catalog index', timeoutMs: 30_000 });
  // Mattermost: people's reactions reach the bot once its WebSocket is up.
  if (mattermost) await waitFor(() => (mattermost.open > 0 ? true : undefined), { what: 'the Mattermost WebSocket', timeoutMs: 30_000 });
  const cli = async (argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    const [name, ...rest] = argv;
    const load = COMMANDS[name!];
    if (!load) throw new Error(`the golden shift has no CLI command ${name}`);
    let so = '';
    let se = '';
    const cio: CliIO = { stdout: (t) => void (so += t), stderr: (t) => void (se += t), stdin: async () => '', env, cwd: dir };
    const code = await (await load())([...rest, '--config', configFile], cio);
    return { code, stdout: so, stderr: se };
  };
  return {
    surface,
    clock,
    dir,
    configFile,
    env,
    remote,
    github,
    ...(slack ? { slack } : {}),
    ...(matrix ? { matrix } : {}),
    ...(mattermost ? { mattermost } : {}),
    running,
    url,
    stdout: () => out,
    cli,
    close: async () => {
      await running.stop();
      await slack?.close();
      await matrix?.close();
      await mattermost?.close();
      await github.close();
      await remote.cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
