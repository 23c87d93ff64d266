import { configRedactor } from '../config/config-secrets.js';
import { richText } from '../core/chat/thread-view.js';
import { onCallText, onCallView } from '../core/oncall/oncall-view.js';
import { systemClock } from '../ports/clock.js';
import { buildOnCall } from '../runtime/build-oncall.js';
import { createLogger } from '../runtime/create-logger.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand } from '../runtime/cli-io.js';

const USAGE = `reprise oncall [ROUTE] [--config FILE] [--json]

Who is on call now for an on-call route (\`default\` unless ROUTE names one of oncall.routes),
and until when: from the rotation in the config, PagerDuty's /oncalls or Grafana OnCall, as
critical cards and \`/reprise oncall\` say it. Exit 1 when nobody could be named.
`;

/** `reprise oncall [ROUTE]`: who is on call, as the bot would name them. */
export const oncall: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const loaded = loadCliConfig(parsed.values.config, io, { sections: ['oncall', 'pagerduty', 'log'] });
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  const logger = createLogger({ level: 'error', env: io.env, redactor: configRedactor(config), ...(io.log ? { destination: io.log } : {}) });
  const service = buildOnCall(config, { transports: [], clock: systemClock, logger });
  if (!service) {
    io.stderr('reprise oncall: no on-call source is configured: set oncall.rotation, oncall.pagerduty or oncall.grafana (docs/oncall.md)\n');
    return 2;
  }
  const route = parsed.positionals.join(' ').trim() || 'default';
  const answer = await service.lookup({ route });
  if (parsed.values.json) io.stdout(`${JSON.stringify({ route, ...answer }, null, 2)}\n`);
  else {
    const view = onCallView(answer, 'cli', systemClock.now());
    const emails = answer.known ? answer.people.filter((p) => p.email).map((p) => `${p.name} <${p.email}>`) : [];
    io.stdout(`${route}: ${richText(onCallText(view, 'cli'))}\n${emails.length > 0 ? `  ${emails.join(', ')}\n` : ''}`);
  }
  return answer.known ? 0 : 1;
};
