import { createHash } from 'node:crypto';

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseAlertmanagerPayload } from '../core/alertmanager.js';
import { isRepriseError } from '../core/errors.js';
import { triggerKey } from '../core/identity.js';
import type { Incident } from '../core/types.js';
import { parseCli } from './args.js';
import { buildInvestigator } from '../runtime/build-investigator.js';
import { catalogFolder, loadSnapshot } from '../runtime/open-catalog.js';
import { loadCliConfig } from './cli-config.js';
import { formatInvestigation, formatStep } from './format-investigation.js';
import type { CliCommand } from '../runtime/cli-io.js';

const USAGE = 'reprise investigate (--alert FILE|- | --text "...") [--json] [--catalog DIR] [--config FILE]';

export const NO_MODEL_HELP = `reprise investigate: no model is configured.
Point it at any OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama, LiteLLM), either with env:
  REPRISE_MODEL_BASE_URL=https://api.openai.com/v1 REPRISE_MODEL=gpt-4.1-mini OPENAI_API_KEY=sk-… reprise investigate --text "…"
or with a config file (reprise investigate --config reprise.yaml …):
  model:
    base_url: http://localhost:11434/v1
    model: qwen2.5:14b
See \`reprise config defaults\` for every model: and tools: key.
`;

/** An on-demand incident from free text (`/reprise investigate <text>`). */
export function incidentFromText(text: string, now: Date): Incident {
  const title = text.split('\n')[0]!.trim().slice(0, 120);
  return {
    source: 'cli',
    status: 'firing',
    fingerprint: createHash('sha256').update(text).digest('hex').slice(0, 16),
    triggerKey: triggerKey('ManualInvestigation'),
    alertname: 'ManualInvestigation',
    title,
    message: text.trim(),
    severity: 'warning',
    labels: {},
    annotations: {},
    startsAt: now.toISOString(),
  };
}

/**
 * `reprise investigate`: builds the model and tools from config, runs one investigation and
 * prints the Finding with its Steps. Exit 0 with a Finding or a degraded answer, 1 when the
 * run ended without either, 2 for usage and config problems.
 */
export const investigateCommand: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      alert: { type: 'string', description: 'Alertmanager webhook payload file, or - for stdin', valueName: 'FILE' },
      text: { type: 'string', description: 'a free-text incident description instead of an alert', valueName: 'TEXT' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
      catalog: { type: 'string', description: 'catalog directory (default: the configured or bundled catalog)', valueName: 'DIR' },
      config: { type: 'string', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  if ((values.alert === undefined) === (values.text === undefined)) {
    io.stderr(`reprise investigate: give exactly one of --alert FILE and --text "…"\nusage: ${USAGE}\n`);
    return 2;
  }
  const loaded = loadCliConfig(values.config, io, { oneShot: true });
  if ('exit' in loaded) return loaded.exit;
  const { config } = loaded;
  if (!config.model) {
    io.stderr(NO_MODEL_HELP);
    return 2;
  }

  let incident: Incident;
  if (values.text !== undefined) {
    if (!values.text.trim()) {
      io.stderr('reprise investigate: --text is empty\n');
      return 2;
    }
    incident = incidentFromText(values.text, new Date());
  } else {
    try {
      const raw = values.alert === '-' ? await io.stdin() : await readFile(resolve(io.cwd, values.alert!), 'utf8');
      const all = parseAlertmanagerPayload(JSON.parse(raw), { identity: { labels: config.identity.labels } }).incidents;
      const firing = all.filter((i) => i.status === 'firing');
      if (firing.length === 0) {
        io.stderr('reprise investigate: the payload has no firing alert (a resolved alert never starts an investigation)\n');
        return 2;
      }
      if (firing.length > 1) io.stderr(`note: the payload has ${firing.length} firing alerts; investigating the first (${firing[0]!.triggerKey})\n`);
      incident = firing[0]!;
    } catch (err) {
      io.stderr(`reprise investigate: cannot read the alert payload: ${isRepriseError(err) || err instanceof Error ? err.message : String(err)}\n`);
      return 2;
    }
  }

  const { dir } = catalogFolder(config, values.catalog ? resolve(io.cwd, values.catalog) : undefined);
  const { snapshot, skipped } = await loadSnapshot(dir);
  for (const p of skipped) io.stderr(`warning: skipped ${p.file}:${p.line} (${p.rule}): ${p.message}\n`);
  const built = await buildInvestigator(config, { catalog: () => snapshot, cwd: io.cwd });
  for (const p of built.problems) io.stderr(`warning: ${p}\n`);
  try {
    const result = await built.investigator.run({ incident }, (s) => {
      if (!values.json) io.stderr(`… ${formatStep(s)}\n`);
    });
    io.stdout(values.json ? `${JSON.stringify(result, null, 2)}\n` : formatInvestigation(result));
    return result.finding || result.degraded ? 0 : 1;
  } finally {
    await built.close();
  }
};
