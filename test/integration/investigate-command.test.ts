/**
 * `/reprise investigate …` (Slack) / `!reprise investigate …` (Matrix) in `serve`: the model's
 * part answers with the finding, and the run is counted like an incident's investigation.
 */
import { describe, expect, it } from 'vitest';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import { loadSnapshot } from '../../src/runtime/open-catalog.js';
import { startModel } from '../../src/runtime/start-model.js';
import { parseConfigText } from '../../src/config/load-config.js';
import { Ledger } from '../../src/core/ledger/ledger.js';
import type { InvestigationEnd } from '../../src/ports/loop-observer.js';
import { silentLogger } from '../../src/ports/logger.js';
import { systemClock } from '../../src/ports/clock.js';
import { byRole, fake, finding, INVESTIGATE_CATALOG, useModelAndTools, verdict } from './helpers/investigation.js';
import { REPO_ROOT } from './helpers/spawn-bot.js';

useModelAndTools();

describe('an on-demand investigation', () => {
  it('answers with the finding and is counted by status', { timeout: 60_000 }, async () => {
    const config = parseConfigText(
      [
        'server:',
        '  bearer_token: t0ken-for-the-tests',
        'model:',
        `  base_url: ${fake.baseUrl}`,
        '  model: main-model',
        '  max_retries: 0',
        '  request_timeout: 5s',
        '',
      ].join('\n'),
      { env: {}, cwd: REPO_ROOT },
    );
    const store = createStore('memory://', '.');
    const ledger = await Ledger.open(store, { resolveWindowMs: 86_400_000 });
    const { snapshot } = await loadSnapshot(INVESTIGATE_CATALOG);
    const ended: InvestigationEnd[] = [];
    const model = await startModel(config, {
      catalog: () => snapshot,
      ledger,
      clock: systemClock,
      logger: silentLogger,
      observer: { recallDecided: () => undefined, investigationEnded: (e) => void ended.push(e) },
    });
    try {
      fake.respond(byRole({ investigate: [finding()], verify: [verdict('supported', 0.8)] }));
      const view = await model.command('checkout-api pods restart every few minutes', { via: 'slack', id: 'U1' } as never);
      expect(view.title).toMatch(/Investigation of “checkout-api pods restart/);
      expect(view.body.map((l) => l.join('')).join('\n')).toMatch(/completed · \d+ model calls/);
      expect(ended).toEqual([{ status: 'completed', reason: 'none' }]);

      expect((await model.command('   ', { via: 'slack', id: 'U1' } as never)).body[0]!.join('')).toMatch(/Say what to investigate/);
      expect(ended).toHaveLength(1);
    } finally {
      await model.close();
      await store.close();
    }
  });
});
