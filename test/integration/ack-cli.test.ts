/**
 * `reprise ack` and `reprise incident show` (issue 21 items 1 and 5) against a real `serve`: the
 * ack goes through the running bot's control socket and edits the card on the console surface;
 * the timeline is read beside the bot; with no bot running the ack is written under the store lock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { cleanup, makeTmpDir, runCli, spawnBot } from './helpers/spawn-bot.js';

afterEach(cleanup);

const TRIGGER = 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1';

describe('reprise ack / reprise incident show', () => {
  it('acks through the running bot, shows the timeline beside it, and writes directly when none runs', { timeout: 150_000 }, async () => {
    const dataDir = makeTmpDir();
    const env = { REPRISE_DATA_DIR: dataDir };
    const bot = await spawnBot({ dataDir });
    expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
    await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'rca'));

    const ok = await runCli(['ack', TRIGGER, '--user', '<!channel>bob'], { env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^ack recorded via the running bot \(pid \d+\) as event #\d+: <!channel>bob is on kubepodcrashlooping/);
    await bot.waitForTranscript((ls) => ls.some((l) => /👀 @<!channel>bob is on it · [0-9dhmin ]+ after it fired/.test(l.text)));
    const again = await runCli(['ack', TRIGGER, '--user', '<!channel>bob'], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already on it/);
    const unknown = await runCli(['ack', 'nope|x'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no incident thread for trigger nope\|x/);

    const shown = await runCli(['incident', 'show', TRIGGER], { env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/acknowledged after [0-9dhmin ]+ · still firing · on it: @<!channel>bob/);
    expect(shown.stdout).toMatch(/🚨 fired/);
    expect(shown.stdout).toMatch(/💬 posted to console/);
    expect(shown.stdout).toMatch(/👀 acknowledged by <!channel>bob via cli/);
    const json = JSON.parse((await runCli(['incident', 'show', TRIGGER, '--json'], { env })).stdout) as { items: Array<{ kind: string }> };
    expect(json.items.map((i) => i.kind)).toEqual(['fired', 'opened', 'posted', 'ack']);
    const none = await runCli(['incident', 'show', 'kubepodcrashloopin'], { env });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no incident thread for trigger "kubepodcrashloopin"/);

    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    const direct = await runCli(['ack', TRIGGER, '--user', 'ann'], { env });
    expect(direct.code, direct.stderr).toBe(0);
    expect(direct.stdout).toMatch(/^ack recorded as event #\d+: ann is on .*; the card is edited when the bot next runs\n$/);
  });
});
