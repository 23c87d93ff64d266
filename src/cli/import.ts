import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { IMPORT_FILING_OPTIONS } from './import-options.js';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { simpleGit } from 'simple-git';
import { batches, fileBatch, planImport, type FiledBatch, type ImportPlan } from '../core/import/import-plan.js';
import { firstLine } from '../core/import/postmortem-entry.js';
import { MAX_POSTMORTEM_BYTES, readPostmortem, type ReadResult } from '../core/import/read-postmortem.js';
import { escapeLine } from '../core/render/escape-text.js';
import { createLogger } from '../runtime/create-logger.js';
import { forgeFromConfig } from '../runtime/curate-context.js';
import { loadSnapshot } from '../runtime/open-catalog.js';
import { dedupCatalog, filedBefore, importDrafts } from '../runtime/import-target.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand, CliIO } from '../runtime/cli-io.js';

const USAGE = `reprise import postmortems <DIR | GIT-URL> [--dry-run] [--json] [--batch N] [--catalog DIR] [--config FILE]

Turns the postmortems a team already wrote (markdown, in the usual templates: ATX or setext
headings, front matter or bold "Field:" lines, sections such as Summary, Impact, Root cause,
Trigger, Resolution / Mitigation, Action items, Timeline, in any order) into Incident entry
drafts: the alert names and workloads they quote, Resolution and Cause from their sections.
Each goes through the curator's dedup gate (the catalog the bot serves, the forge's PRs) and
the new ones are filed as pull requests, N entries per PR (default 10). --dry-run files
nothing and prints what would be filed; a re-run files nothing already filed; a postmortem
that cannot be read is listed with the reason and nothing of it is imported.
Filing needs the \`forge\` config block (or GITHUB_TOKEN and REPRISE_GITHUB_REPO) and catalog.git.`;

const MAX_FILES = 10_000;
const SKIP_NAMES = new Set(['readme.md', 'index.md', '_index.md', 'summary.md', 'contributing.md', 'changelog.md']);
const isGitUrl = (s: string): boolean => /^(https?|ssh|git|file):\/\//.test(s) || /^[\w.-]+@[\w.-]+:/.test(s);

export const importCommand: CliCommand = async (argv, io) => {
  const [what, ...rest] = argv;
  if (what === 'postmortems') return importPostmortems(rest, io);
  if (what === 'pagerduty') return (await import('./import-pagerduty.js')).importPagerDuty(rest, io);
  if (what === '--help' || what === '-h' || what === 'help') {
    io.stdout(`usage: ${USAGE}\n\nusage: ${(await import('./import-pagerduty.js')).PAGERDUTY_USAGE}\n`);
    return 0;
  }
  if (what === undefined) {
    io.stderr(`reprise import: name what to import\nusage: ${USAGE}\n`);
    return 2;
  }
  io.stderr(`reprise import: unknown source ${JSON.stringify(what)}; try \`reprise import postmortems DIR\`\n`);
  return 2;
};

interface Source {
  root: string;
  /** The URL of a file in the repository imported from, when there is one. */
  url?: (file: string) => string | undefined;
  cleanup: () => Promise<void>;
}

async function openSource(given: string, io: CliIO): Promise<Source | string> {
  if (!isGitUrl(given)) {
    const root = resolve(io.cwd, given);
    const s = await stat(root).catch(() => undefined);
    if (!s?.isDirectory()) return `${given} is not a folder (or a git URL) of postmortems`;
    return { root, cleanup: async () => {} };
  }
  const root = await mkdtemp(join(tmpdir(), 'reprise-import-'));
  try {
    await simpleGit().clone(given, root, ['--depth', '1', '--quiet']);
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    return `could not clone ${given.replace(/\/\/[^@/]*@/, '//***@')}: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`;
  }
  const web = /^https:\/\/[^@/]+\/[^\s]+?(\.git)?\/?$/.test(given) ? given.replace(/\.git\/?$/, '').replace(/\/$/, '') : undefined;
  return {
    root,
    ...(web ? { url: (file: string) => `${web}/blob/HEAD/${file.split(sep).map(encodeURIComponent).join('/')}` } : {}),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** Every markdown file under `root` (dotfiles, `.git` and index pages left out), in path order. */
async function markdownFiles(root: string): Promise<{ files: string[]; skipped: { file: string; reason: string }[] }> {
  const files: string[] = [];
  const skipped: { file: string; reason: string }[] = [];
  const walk = async (dir: string): Promise<void> => {
    const items = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const d of items) {
      if (d.name.startsWith('.') || d.name === 'node_modules') continue;
      const abs = join(dir, d.name);
      if (d.isDirectory()) await walk(abs);
      else if (d.isFile() && /\.(md|markdown)$/i.test(d.name)) {
        const rel = relative(root, abs);
        if (SKIP_NAMES.has(d.name.toLowerCase())) continue;
        if (/template/i.test(d.name)) skipped.push({ file: rel, reason: 'a template, not a postmortem' });
        else files.push(rel);
      }
    }
  };
  await walk(root);
  return { files, skipped };
}

async function readAll(root: string, files: readonly string[], progress: (done: number) => void): Promise<ReadResult[]> {
  const out: ReadResult[] = [];
  for (const [i, file] of files.entries()) {
    const abs = join(root, file);
    const size = (await stat(abs)).size;
    if (size > MAX_POSTMORTEM_BYTES) out.push({ ok: false, file, reason: `larger than ${MAX_POSTMORTEM_BYTES / 1024} KiB: not a hand-written postmortem` });
    else {
      const bytes = await readFile(abs);
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        out.push({ ok: false, file, reason: 'not UTF-8 text' });
        continue;
      }
      out.push(readPostmortem(file.split(sep).join('/'), text));
    }
    progress(i + 1);
  }
  return out;
}

async function importPostmortems(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCli(
    argv,
    {
      ...IMPORT_FILING_OPTIONS,
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const fail = (msg: string): number => {
    io.stderr(`reprise import postmortems: ${msg}\n`);
    return 2;
  };
  const { values, positionals } = parsed;
  if (positionals.length !== 1)
    return fail(`${positionals.length === 0 ? 'name the folder or git URL of the postmortems' : 'one folder or git URL at a time'}\n\nusage: ${USAGE}`);
  const batch = values.batch === undefined ? 10 : Number(values.batch);
  if (!Number.isInteger(batch) || batch < 1 || batch > 50) return fail(`--batch must be a whole number from 1 to 50, got ${JSON.stringify(values.batch)}`);
  const dryRun = values['dry-run'] === true;

  const loaded = loadCliConfig(values.config, io, { sections: ['store', 'log', 'catalog', 'forge'] });
  if ('exit' in loaded) return loaded.exit;
  const config = loaded.config;
  const logger = createLogger({ level: 'warn', env: io.env, ...(io.log ? { destination: io.log } : {}) });
  const forge = forgeFromConfig(config, logger);
  if (!dryRun && (!forge || !config.catalog.git))
    return fail(
      `filing needs ${forge ? '' : 'a forge (the `forge` config block, or GITHUB_TOKEN and REPRISE_GITHUB_REPO) '}${!forge && !config.catalog.git ? 'and ' : ''}${config.catalog.git ? '' : "the catalog's git remote (catalog.git.url) to push draft branches to"}; run with --dry-run to see the drafts without filing`,
    );
  const catalog = await dedupCatalog(config, values.catalog === undefined ? undefined : resolve(io.cwd, values.catalog));
  if (typeof catalog === 'string') return fail(catalog);

  const source = await openSource(positionals[0]!, io);
  if (typeof source === 'string') {
    await catalog.cleanup();
    return fail(source);
  }
  try {
    const { files, skipped: templates } = await markdownFiles(source.root);
    if (files.length > MAX_FILES) return fail(`${files.length} markdown files: more than ${MAX_FILES}; import a sub-folder at a time`);
    if (files.length === 0 && templates.length === 0) return fail(`no markdown files (.md) under ${positionals[0]}`);
    const say = (line: string): void => io.stderr(`${escapeLine(line)}\n`);
    const every = Math.max(1, Math.ceil(files.length / 10));
    const read = await readAll(source.root, files, (n) => {
      if (files.length >= 20 && (n % every === 0 || n === files.length)) say(`reading postmortems: ${n}/${files.length}`);
    });
    const { snapshot } = await loadSnapshot(catalog.dir);
    const before = await filedBefore(forge, dryRun, say);
    if ('error' in before) return fail(before.error);
    const { pullRequests } = before;
    const plan = planImport(read, {
      catalog: snapshot,
      pullRequests,
      dupScore: config.forge?.dup_score ?? 8,
      ...(source.url ? { sourceUrl: source.url } : {}),
    });
    plan.unreadable.push(...templates);
    const groups = batches(plan.drafts, batch);
    const filed: FiledBatch[] = [];
    const failed: { files: string[]; error: string }[] = [];
    if (!dryRun && forge && config.catalog.git && groups.length > 0) {
      const drafts = importDrafts(config, config.catalog.git, logger);
      for (const [i, g] of groups.entries()) {
        try {
          const pr = await fileBatch(forge, drafts, g, { labels: config.forge?.labels ?? [], prefix: config.catalog.git.path });
          filed.push(pr);
          say(`[${i + 1}/${groups.length}] filed PR #${pr.number} with ${g.length} entr${g.length === 1 ? 'y' : 'ies'}: ${pr.url}`);
        } catch (err) {
          const error = err instanceof Error ? err.message : String(err);
          failed.push({ files: g.map((d) => d.doc.file), error });
          say(`[${i + 1}/${groups.length}] could not file ${g.length} entr${g.length === 1 ? 'y' : 'ies'} (a re-run retries them): ${error}`);
        }
      }
    }
    io.stdout(
      values.json ? `${JSON.stringify(toJson(plan, { dryRun, batch, filed, failed }), null, 2)}\n` : formatPlan(plan, { dryRun, batch, filed, failed }),
    );
    return failed.length > 0 ? 1 : 0;
  } finally {
    await source.cleanup();
    await catalog.cleanup();
  }
}

interface RunFacts {
  dryRun: boolean;
  batch: number;
  filed: FiledBatch[];
  failed: { files: string[]; error: string }[];
}

function toJson(plan: ImportPlan, r: RunFacts): unknown {
  const prOf = (file: string): FiledBatch | undefined => r.filed.find((b) => b.files.includes(file));
  return {
    mode: r.dryRun ? 'dry-run' : 'apply',
    drafts: plan.drafts.map((d) => {
      const pr = prOf(d.doc.file);
      return {
        file: d.doc.file,
        path: d.entry.path,
        type: d.entry.type,
        title: d.entry.title,
        ...(d.resource ? { resource: d.resource } : {}),
        alerts: d.alerts,
        ...(d.doc.date ? { date: d.doc.date } : {}),
        resolution: d.doc.sections.resolution ?? '',
        ...(d.doc.sections.cause ? { cause: d.doc.sections.cause } : {}),
        fingerprint: d.fingerprint,
        ...(pr ? { pr: { number: pr.number, url: pr.url } } : {}),
      };
    }),
    skipped: plan.skipped,
    unreadable: plan.unreadable,
    pullRequests: r.filed,
    failed: r.failed,
  };
}

function formatPlan(plan: ImportPlan, r: RunFacts): string {
  const lines: string[] = [];
  for (const d of plan.drafts) {
    const fix = firstLine(d.doc.sections.resolution ?? '');
    lines.push(
      `+ ${d.doc.file} → ${d.entry.path} (${d.entry.type}${d.resource ? ` ${d.resource}` : ''}${d.alerts.length > 0 ? `, ${d.alerts.join(', ')}` : ''})`,
    );
    lines.push(`    Resolution: ${fix.length > 160 ? `${fix.slice(0, 159)}…` : fix}`);
    if (!d.resource && d.alerts.length === 0) lines.push('    (names no alert or workload: found by search only, never recalled for an alert)');
  }
  for (const s of plan.skipped) lines.push(`= ${s.file}: ${s.reason}`);
  for (const s of plan.unreadable) lines.push(`✗ ${s.file}: ${s.reason}`);
  const n = plan.drafts.length;
  const prs = Math.ceil(n / r.batch);
  const tail = `${plan.skipped.length} already known, ${plan.unreadable.length} not imported`;
  if (n === 0) lines.push(`nothing new to file (${tail})`);
  else if (r.dryRun)
    lines.push(`would file ${n} entr${n === 1 ? 'y' : 'ies'} in ${prs} pull request${prs === 1 ? '' : 's'} (${tail}); run without --dry-run to file`);
  else {
    const done = r.filed.reduce((a, b) => a + b.files.length, 0);
    lines.push(
      `filed ${done} entr${done === 1 ? 'y' : 'ies'} in ${r.filed.length} pull request${r.filed.length === 1 ? '' : 's'}${r.failed.length > 0 ? `; ${n - done} failed (a re-run retries them)` : ''} (${tail})`,
    );
  }
  return `${lines.map(escapeLine).join('\n')}\n`;
}
