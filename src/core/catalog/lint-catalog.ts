import type { Entry, LintProblem } from '../types.js';
import { resolvePointers } from '../recall/pointer-families.js';
import { loadCatalog } from './load-catalog.js';

/** What `reprise catalog lint` reports (also its `--json` shape). */
export interface LintReport {
  /** Entries that loaded. */
  entries: number;
  errors: number;
  warnings: number;
  problems: LintProblem[];
}

/** Load `dir` and summarise its problems. Rejects only when the root itself is unusable. */
export async function lintCatalog(dir: string): Promise<LintReport> {
  const loaded = await loadCatalog(dir);
  const { entries } = loaded;
  const problems = [...loaded.problems, ...pointerProblems(entries)];
  const errors = problems.filter((p) => p.severity === 'error').length;
  return { entries: entries.length, errors, warnings: problems.length - errors, problems };
}

/**
 * A pointer page whose target is not in the catalog hands its alerts to nobody: the alert
 * then gets the pointer page itself ("see X") and no X.
 */
export function pointerProblems(entries: readonly Entry[]): LintProblem[] {
  const resolved = resolvePointers(entries);
  return entries
    .filter((e) => e.pointsTo !== undefined && !resolved.has(e.id))
    .map((e) => ({
      file: e.id, line: 1, rule: 'pointer-unresolved', severity: 'warning' as const,
      message: `this page only points to ${e.pointsTo}, which is not in the catalog; add that runbook or give this page content of its own`,
    }));
}

/** "108 entries loaded, 0 errors, 108 warnings". */
export function lintSummary(report: LintReport): string {
  const n = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;
  return `${n(report.entries, 'entry', 'entries')} loaded, ${n(report.errors, 'error', 'errors')}, ${n(report.warnings, 'warning', 'warnings')}`;
}

/** `file:line: severity rule: message` lines plus a summary line. */
export function formatLintHuman(report: LintReport, dir: string): string {
  const lines = report.problems.map((p) => `${joinPath(dir, p.file)}:${p.line}: ${p.severity} ${p.rule}: ${p.message}`);
  lines.push(lintSummary(report));
  return `${lines.join('\n')}\n`;
}

/** Escaping from GitHub's workflow-command spec: data escapes %, CR, LF; properties also : and ,. */
function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** GitHub Actions annotations (`::error file=…,line=…,title=rule::message`), then the summary. */
export function formatLintGithub(report: LintReport, dir: string): string {
  const lines = report.problems.map(
    (p) => `::${p.severity} file=${escapeProperty(joinPath(dir, p.file))},line=${p.line},title=${escapeProperty(p.rule)}::${escapeData(p.message)}`,
  );
  lines.push(lintSummary(report));
  return `${lines.join('\n')}\n`;
}

/** The problem's file as the user named the catalog (`catalog` + `x.md` → `catalog/x.md`). */
export function joinPath(dir: string, file: string): string {
  if (dir === '' || dir === '.' || dir === './') return file;
  return `${dir.replace(/[/\\]+$/, '')}/${file}`;
}
