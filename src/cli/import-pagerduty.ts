import { resolve } from 'node:path';
import { IMPORT_FILING_OPTIONS } from './import-options.js';
import { pagerDutyHistory } from '../adapters/pagerduty/pagerduty-history.js';
import { CountingForge, type FilingDeps } from '../core/curate/file-item.js';
import { hasMarker } from '../core/curate/markers.js';
import { batches } from '../core/import/import-plan.js';
import { filePagerDutyBatch, amendFromPagerDuty, type FiledPagerDutyBatch, type NewDraft } from '../core/import/pagerduty-batch.js';
import { historyIncident, planPagerDutyImport, type HistoryIncident, type PagerDutyPlan } from '../core/import/pagerduty-plan.js';
import { extractFix } from '../core/import/pagerduty-fix.js';
import { tryParseDuration } from '../core/duration.js';
import { escapeLine } from '../core/render/escape-text.js';
import type { ForgeComment } from '../ports/forge.js';
import { PagerDutyReadError } from '../ports/pagerduty-history.js';
import { createLogger } from '../runtime/create-logger.js';
import { forgeFromConfig } from '../runtime/curate-context.js';
import { dedupCatalog, filedBefore, importDrafts } from '../runtime/import-target.js';
import { loadSnapshot } from '../runtime/open-catalog.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliIO } from '../runtime/cli-io.js';

export const PAGERDUTY_USAGE = `reprise import pagerduty [--since 90d|12h|DATE] [--until DATE] [--service ID]… [--dry-run] [--json] [--batch N] [--catalog DIR] [--config FILE]

Reads PagerDuty's resolved incidents of the window (default the last 90 days), their notes and
how each was resolved, and turns those that say what fixed them — a note "fixed: …", "fix: …",
"resolution: …", "resolved by …", else the resolve's own message — into fixes for their
triggers, keyed as the live PagerDuty webhook keys them. Each goes through the curator's dedup
gate: a new Incident entry per trigger (N per PR, default 10), the fixes of a trigger whose
entry exists added to that entry, nothing filed twice. --dry-run files nothing and prints what
would be filed; incidents skipped are listed with the reason.
Reading needs a PagerDuty REST API token (pagerduty.token or REPRISE_PAGERDUTY_TOKEN); filing
needs the \`forge\` config block (or GITHUB_TOKEN and REPRISE_GITHUB_REPO) and catalog.git.`;

/** How many incidents' notes are read at once: PagerDuty allows ~900 requests a minute per key. */
const CONCURRENCY = 4;

/** `90d`, `12h`, `1h30m` back from `now`, or an ISO date / date-time; a string says what is wrong. */
export function parseWhen(text: string, now: Date, flag: string): Date | string {
  const ms = tryParseDuration(text);
  if (ms !== undefined && ms > 0) return new Date(now.getTime() - ms);
  if (/^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim()) && !Number.isNaN(Date.parse(text))) return new Date(Date.parse(text));
  return `${flag} must be a duration back from now (90d, 12h, 1h30m) or an ISO date (2026-09-01, 2026-09-01T00:00:00Z), got ${JSON.stringify(text)}`;
}

export async function importPagerDuty(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCli(
    argv,
    {
      since: { type: 'string', description: 'start of the window: 90d, 12h or an ISO date (default 90d)', valueName: 'WHEN' },
      until: { type: 'string', description: 'end of the window (default now)', valueName: 'WHEN' },
      service: { type: 'string', multiple: true, description: 'only this PagerDuty service id (repeatable)', valueName: 'ID' },
      ...IMPORT_FILING_OPTIONS,
    },
    PAGERDUTY_USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const fail = (msg: string, code = 2): number => {
    io.stderr(`reprise import pagerduty: ${escapeLine(msg)}\n`);
    return code;
  };
  const { values, positionals } = parsed;
  if (positionals.length > 0)
    return fail(`takes no arguments (got ${JSON.stringify(positionals[0])}); the window is --since / --until\n\nusage: ${PAGERDUTY_USAGE}`);
  const now = new Date();
  const since = parseWhen(values.since ?? '90d', now, '--since');
  if (typeof since === 'string') return fail(since);
  const until = values.until === undefined ? now : parseWhen(values.until, now, '--until');
  if (typeof until === 'string') return fail(until);
  if (since.getTime() >= until.getTime()) return fail(`--since (${since.toISOString()}) must be before --until (${until.toISOString()})`);
  const batch = values.batch === undefined ? 10 : Number(values.batch);
  if (!Number.isInteger(batch) || batch < 1 || batch > 50) return fail(`--batch must be a whole number from 1 to 50, got ${JSON.stringify(values.batch)}`);
  const services = values.service ?? [];
  const bad = services.find((s) => !/^[A-Za-z0-9_-]{1,64}$/.test(s));
  if (bad !== undefined) return fail(`--service takes a PagerDuty service id (like PABC123), got ${JSON.stringify(bad)}`);
  const dryRun = values['dry-run'] === true;

  const loaded = loadCliConfig(values.config, io, { sections: ['store', 'log', 'catalog', 'forge', 'pagerduty', 'identity'] });
  if ('exit' in loaded) return loaded.exit;
  const config = loaded.config;
  const token = config.pagerduty.token;
  if (!token)
    return fail(
      'needs a PagerDuty REST API token to read incidents: set REPRISE_PAGERDUTY_TOKEN (or pagerduty.token in the config file) to an API key that can read incidents (PagerDuty → Integrations → API Access Keys; a read-only key is enough)',
    );
  const logger = createLogger({ level: 'warn', env: io.env, ...(io.log ? { destination: io.log } : {}) });
  const forge = forgeFromConfig(config, logger);
  if (!dryRun && (!forge || !config.catalog.git))
    return fail(
      `filing needs ${forge ? '' : 'a forge (the `forge` config block, or GITHUB_TOKEN and REPRISE_GITHUB_REPO) '}${!forge && !config.catalog.git ? 'and ' : ''}${config.catalog.git ? '' : "the catalog's git remote (catalog.git.url) to push draft branches to"}; run with --dry-run to see the fixes without filing`,
    );
  const say = (line: string): void => io.stderr(`${escapeLine(line)}\n`);
  const pd = pagerDutyHistory({
    apiUrl: config.pagerduty.api_url,
    token,
    timeoutMs: config.pagerduty.timeout_ms,
    maxAttempts: config.pagerduty.max_attempts,
    backoff: { baseMs: config.pagerduty.retry_base_ms, maxMs: config.pagerduty.retry_max_ms },
    onWait: (ms, why) => say(`${why}: waiting ${Math.ceil(ms / 1000)}s`),
  });

  const catalog = await dedupCatalog(config, values.catalog === undefined ? undefined : resolve(io.cwd, values.catalog));
  if (typeof catalog === 'string') return fail(catalog);
  try {
    let items: HistoryIncident[];
    try {
      const raw = await pd.resolvedIncidents({ since, until, serviceIds: services }, (n) => {
        if (n >= 100) say(`listing resolved incidents: ${n}`);
      });
      items = await readAll(raw, pd, say);
    } catch (err) {
      if (err instanceof PagerDutyReadError) return fail(`${err.message} (nothing was filed)`, err.fatal ? 2 : 1);
      throw err;
    }
    const { snapshot } = await loadSnapshot(catalog.dir);
    const before = await filedBefore(forge, dryRun, say);
    if ('error' in before) return fail(before.error, 1);
    const { pullRequests } = before;
    // Comments of the open PRs a trigger here has its entry on: an earlier run's amend left its markers there.
    const fps = new Set(items.flatMap((i) => historyIncident(i.raw, config.identity)?.fp ?? []));
    const comments = new Map<number, ForgeComment[]>();
    for (const p of pullRequests.filter((p) => p.state === 'open' && [...fps].some((fp) => hasMarker(p.body, 'dup', fp))))
      comments.set(p.number, forge ? await forge.listComments(p.number).catch(() => []) : []);
    const plan = planPagerDutyImport(items, {
      catalog: snapshot,
      pullRequests,
      comments: (n) => comments.get(n) ?? [],
      until,
      identity: config.identity,
    });

    const filed: FiledPagerDutyBatch[] = [];
    const amended = new Map<string, { number?: number; url?: string; decision: string; detail?: string }>();
    const failed: { incidents: string[]; error: string }[] = [];
    const fresh = plan.drafts.filter((d): d is NewDraft => d.kind === 'new');
    const groups = batches(fresh, batch);
    const edits = plan.drafts.filter((d) => d.kind !== 'new');
    if (!dryRun && forge && config.catalog.git && plan.drafts.length > 0) {
      const drafts = importDrafts(config, config.catalog.git, logger);
      for (const [i, g] of groups.entries()) {
        try {
          const pr = await filePagerDutyBatch(forge, drafts, g, { labels: config.forge?.labels ?? [], prefix: config.catalog.git.path });
          filed.push(pr);
          say(`[${i + 1}/${groups.length}] filed PR #${pr.number} with ${g.length} entr${g.length === 1 ? 'y' : 'ies'}: ${pr.url}`);
        } catch (err) {
          const error = err instanceof Error ? err.message : String(err);
          failed.push({ incidents: g.flatMap((d) => d.fixes.map((f) => f.id)), error });
          say(`[${i + 1}/${groups.length}] could not file ${g.length} entr${g.length === 1 ? 'y' : 'ies'} (a re-run retries them): ${error}`);
        }
      }
      const deps: FilingDeps = {
        forge,
        drafts,
        catalog: () => snapshot,
        options: {
          labels: config.forge?.labels ?? [],
          dupScore: config.forge?.dup_score ?? 8,
          neighbours: 5,
          ...(config.catalog.git.path ? { catalogPath: config.catalog.git.path } : {}),
        },
      };
      for (const d of edits) {
        try {
          const o = await amendFromPagerDuty(deps, new CountingForge(forge), d);
          if (!o) throw new Error(`the entry's file could not be read to add the fix (${d.kind === 'catalog' ? d.entryId : `PR #${d.pr.number}`})`);
          amended.set(d.fingerprint, {
            decision: o.decision,
            ...(o.number !== undefined ? { number: o.number } : {}),
            ...(o.url ? { url: o.url } : {}),
            ...(o.detail ? { detail: o.detail } : {}),
          });
          say(`${o.decision === 'amend_pr' ? 'opened' : 'updated'} PR #${o.number ?? '?'} for ${d.triggerKey}: ${o.url ?? ''}`);
        } catch (err) {
          const error = err instanceof Error ? err.message : String(err);
          failed.push({ incidents: d.fixes.map((f) => f.id), error });
          say(`could not add the fixes for ${d.triggerKey} (a re-run retries them): ${error}`);
        }
      }
    }
    const facts: RunFacts = { dryRun, batch, since, until, filed, amended, failed };
    io.stdout(values.json ? `${JSON.stringify(toJson(plan, facts), null, 2)}\n` : formatPlan(plan, facts));
    return failed.length > 0 ? 1 : 0;
  } finally {
    await catalog.cleanup();
  }
}

/** Each incident's notes and, when no note says the fix, its resolve; CONCURRENCY at a time, progress on stderr for long runs. */
async function readAll(raw: readonly unknown[], pd: ReturnType<typeof pagerDutyHistory>, say: (l: string) => void): Promise<HistoryIncident[]> {
  const out: HistoryIncident[] = new Array<HistoryIncident>(raw.length);
  const every = Math.max(1, Math.ceil(raw.length / 10));
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < raw.length; i = next++) {
      const item = raw[i];
      const id = (item as { id?: unknown } | null)?.id;
      if (typeof id !== 'string' || id.trim() === '') out[i] = { raw: item };
      else {
        try {
          const notes = await pd.notes(id);
          const fromNotes = extractFix(notes);
          const resolved = fromNotes ? undefined : await pd.resolve(id);
          out[i] = { raw: item, notes, ...(resolved ? { resolve: resolved } : {}) };
        } catch (err) {
          if (err instanceof PagerDutyReadError && err.fatal) throw err;
          out[i] = { raw: item, readError: `its notes or log could not be read: ${err instanceof Error ? err.message : String(err)}` };
        }
      }
      done++;
      if (raw.length >= 20 && (done % every === 0 || done === raw.length)) say(`reading incidents: ${done}/${raw.length}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, raw.length) }, worker));
  return out;
}

interface RunFacts {
  dryRun: boolean;
  batch: number;
  since: Date;
  until: Date;
  filed: FiledPagerDutyBatch[];
  amended: Map<string, { number?: number; url?: string; decision: string; detail?: string }>;
  failed: { incidents: string[]; error: string }[];
}

function toJson(plan: PagerDutyPlan, r: RunFacts): unknown {
  return {
    mode: r.dryRun ? 'dry-run' : 'apply',
    since: r.since.toISOString(),
    until: r.until.toISOString(),
    read: plan.read,
    fixes: plan.drafts.flatMap((d) => {
      const pr = d.kind === 'new' ? r.filed.find((b) => b.incidents.includes(d.fixes[0]!.id)) : r.amended.get(d.fingerprint);
      const entry =
        d.kind === 'new'
          ? { kind: 'new', path: d.entry.path, type: d.entry.type }
          : d.kind === 'catalog'
            ? { kind: 'catalog', entry: d.entryId }
            : { kind: 'open-pr', pr: d.pr.number };
      return d.fixes.map((f) => ({
        incident: f.id,
        ...(f.number !== undefined ? { number: f.number } : {}),
        title: f.title,
        ...(f.url ? { url: f.url } : {}),
        triggerKey: f.triggerKey,
        fingerprint: d.fingerprint,
        fix: f.fix,
        from: f.from,
        ...(f.by ? { by: f.by } : {}),
        at: f.at,
        ...(f.cause ? { cause: f.cause } : {}),
        entry,
        ...(pr?.number !== undefined && pr.url ? { pr: { number: pr.number, url: pr.url } } : {}),
      }));
    }),
    skipped: plan.skipped,
    unreadable: plan.unreadable,
    pullRequests: r.filed,
    amended: [...r.amended.values()],
    failed: r.failed,
  };
}

function formatPlan(plan: PagerDutyPlan, r: RunFacts): string {
  const lines: string[] = [`resolved PagerDuty incidents from ${r.since.toISOString()} to ${r.until.toISOString()}: ${plan.read}`];
  const cut = (t: string): string => {
    const one = t.replace(/\s+/g, ' ').trim();
    return one.length > 160 ? `${one.slice(0, 159)}…` : one;
  };
  const name = (f: { id: string; number?: number }): string => (f.number !== undefined ? `#${f.number} ${f.id}` : f.id);
  for (const d of plan.drafts) {
    const where =
      d.kind === 'new'
        ? `${d.entry.path} (new ${d.entry.type})`
        : d.kind === 'catalog'
          ? `${d.entryId} (adds to the catalog's entry)`
          : `open PR #${d.pr.number} (adds to its entry)`;
    for (const f of d.fixes) {
      lines.push(`+ ${name(f)} ${cut(f.title)} → ${where}`);
      lines.push(`    Fix: ${cut(f.fix)}${f.by ? ` — ${cut(f.by)}` : ''}`);
    }
  }
  for (const s of plan.skipped) lines.push(`= ${name(s)}: ${s.reason}`);
  for (const s of plan.unreadable) lines.push(`✗ ${name(s)}: ${s.reason}`);
  const fixes = plan.drafts.reduce((n, d) => n + d.fixes.length, 0);
  const fresh = plan.drafts.filter((d) => d.kind === 'new').length;
  const edits = plan.drafts.length - fresh;
  const prs = Math.ceil(fresh / r.batch) + edits;
  const tail = `${plan.skipped.length} skipped, ${plan.unreadable.length} unreadable`;
  if (fixes === 0) lines.push(`nothing new to file (${tail})`);
  else if (r.dryRun)
    lines.push(
      `would file ${fixes} fix${fixes === 1 ? '' : 'es'} (${fresh} new entr${fresh === 1 ? 'y' : 'ies'}, ${edits} to existing entries) in ${prs} pull request${prs === 1 ? '' : 's'} (${tail}); run without --dry-run to file`,
    );
  else
    lines.push(
      `filed ${fixes - r.failed.reduce((n, f) => n + f.incidents.length, 0)} fix${fixes === 1 ? '' : 'es'} in ${r.filed.length + r.amended.size} pull request${r.filed.length + r.amended.size === 1 ? '' : 's'}${r.failed.length > 0 ? '; some failed (a re-run retries them)' : ''} (${tail})`,
    );
  return `${lines.map(escapeLine).join('\n')}\n`;
}
