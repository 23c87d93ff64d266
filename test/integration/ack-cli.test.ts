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
    await bot.waitForTranscript((ls) => ls.some((l) => /👀 <!channel>bob is on it · [0-9dhmin ]+ after it fired/.test(l.text)));
    const again = await runCli(['ack', TRIGGER, '--user', '<!channel>bob'], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already on it/);
    const unknown = await runCli(['ack', 'nope|x'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('reprise ack: No trigger is named “nope|x” (`reprise ledger events` lists what the ledger recorded).\n');

    const shown = await runCli(['incident', 'show', TRIGGER], { env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/acknowledged after [0-9dhmin ]+ · still firing · on it: <!channel>bob/);
    expect(shown.stdout).toMatch(/🚨 fired/);
    expect(shown.stdout).toMatch(/💬 posted to console/);
    expect(shown.stdout).toMatch(/👀 acknowledged by <!channel>bob via cli/);
    const json = JSON.parse((await runCli(['incident', 'show', TRIGGER, '--json'], { env })).stdout) as { items: Array<{ kind: string }> };
    expect(json.items.map((i) => i.kind)).toEqual(['fired', 'opened', 'posted', 'ack']);
    // A trigger named by a few of its words, or a part of its key: the same timeline, and stderr says which key.
    const byWords = await runCli(['incident', 'show', 'checkout-api', 'crashloop'], { env });
    expect(byWords.code, byWords.stderr).toBe(0);
    expect(byWords.stdout).toBe(shown.stdout);
    expect(byWords.stderr).toBe(`reprise incident: “checkout-api crashloop” is trigger ${JSON.stringify(TRIGGER)}\n`);
    expect((await runCli(['incident', 'show', 'kubepodcrashloopin'], { env })).stdout).toBe(shown.stdout);
    const typo = await runCli(['incident', 'show', 'chekout-api'], { env });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(`reprise incident: No trigger is named “chekout-api”. The closest: ${JSON.stringify(TRIGGER)}.\n`);

    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    const direct = await runCli(['ack', 'checkout-api', '--user', 'ann'], { env });
    expect(direct.code, direct.stderr).toBe(0);
    expect(direct.stdout).toBe(
      `ack recorded as event #${/#(\d+)/.exec(direct.stdout)?.[1]}: ann is on ${TRIGGER}; the card is edited when the bot next runs\n`,
    );
  });
});
