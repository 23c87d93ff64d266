/**
 * The CLI on the shared corpus (issue 2 "Done when"): `catalog lint` loads all 108 foreign
 * runbooks as Playbooks (warnings, no errors) and `recall` answers dev cases with the expected
 * runbook, or nothing (with a trace) for the cases that have none.
 * The corpus lives in `../shared` beside the clone; without it this file is skipped.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recallJson, type RecallJsonIncident } from './helpers/recall-cli.js';
import { cleanup, makeTmpDir, REPO_ROOT, runCli } from './helpers/spawn-bot.js';

const SHARED = resolve(REPO_ROOT, '../shared');
const RUNBOOKS = resolve(SHARED, 'corpus/runbooks');
const CASES = resolve(SHARED, 'corpus/cases-dev.jsonl');
const HAVE_CORPUS = existsSync(RUNBOOKS) && existsSync(CASES);

interface Case {
  id: string;
  variant: string;
  expect: { runbook?: string; none?: boolean };
  payload: unknown;
}

/** `n` cases spread evenly over `all` (deterministic, so a failure names the same case every run). */
function spread<T>(all: T[], n: number): T[] {
  if (all.length <= n) return all;
  return Array.from({ length: n }, (_, i) => all[Math.round((i * (all.length - 1)) / (n - 1))]!);
}

function loadCases(): { positives: Case[]; nones: Case[] } {
  if (!HAVE_CORPUS) return { positives: [], nones: [] };
  const all = readFileSync(CASES, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Case);
  return {
    positives: spread(
      all.filter((c) => c.variant === 'name-visible' && c.expect.runbook),
      10,
    ),
    nones: spread(
      all.filter((c) => c.expect.none === true),
      3,
    ),
  };
}

/**
 * One `recall` run for a batch of cases: their alerts go in one payload (each alert is its own
 * incident, in order), so 13 cases cost two process starts, not thirteen.
 */
async function recallBatch(cases: Case[], dir: string, name: string): Promise<Map<string, RecallJsonIncident>> {
  const alerts = cases.map((c) => {
    const a = (c.payload as { alerts: unknown[] }).alerts;
    expect(a, `${c.id} has one alert`).toHaveLength(1);
    return a[0];
  });
  const incidents = await recallJson({ ...(cases[0]!.payload as object), alerts }, { catalog: '../shared/corpus/runbooks', dir, name });
  expect(incidents.map((i) => i.fingerprint)).toEqual(alerts.map((a) => (a as { fingerprint: string }).fingerprint));
  return new Map(cases.map((c, i) => [c.id, incidents[i]!]));
}

const { positives, nones } = loadCases();
afterAll(cleanup);

describe.skipIf(!HAVE_CORPUS)(
  `the CLI on the shared corpus${HAVE_CORPUS ? '' : ` — SKIPPED: ${RUNBOOKS} or ${CASES} not found (CI has ../shared beside the clone)`}`,
  () => {
    let answers = new Map<string, RecallJsonIncident>();
    beforeAll(async () => {
      const dir = makeTmpDir();
      answers = new Map([...(await recallBatch(positives, dir, 'positives')), ...(await recallBatch(nones, dir, 'nones'))]);
    });

    it('catalog lint loads all 108 runbooks as Playbooks: exit 0, no errors, warnings', async () => {
      const r = await runCli(['catalog', 'lint', '../shared/corpus/runbooks', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as {
        entries: number;
        errors: number;
        warnings: number;
        problems: Array<{ file: string; line: number; rule: string; severity: string }>;
      };
      expect(report.entries).toBe(108);
      expect(report.errors).toBe(0);
      expect(report.warnings).toBeGreaterThan(0);
      expect(report.problems.every((p) => p.severity === 'warning' && p.file && p.line >= 1 && p.rule)).toBe(true);
      expect(report.problems.some((p) => p.rule === 'foreign-runbook')).toBe(true);
    });

    it('has the cases it samples', () => {
      expect(positives).toHaveLength(10);
      expect(nones).toHaveLength(3);
    });

    it.each(positives.map((c) => [c.id, c] as const))('recall answers %s with the expected runbook', (id, c) => {
      const inc = answers.get(id);
      expect(inc, 'one incident').toBeDefined();
      expect(inc!.answer, JSON.stringify(inc!.trace.filter((s) => s.gate !== 'structural' || s.passed))).toMatchObject({
        kind: 'runbook',
        entry: c.expect.runbook,
      });
      expect(inc!.answer!.confidence).toBeGreaterThan(0);
      expect(inc!.answer!.confidence).toBeLessThanOrEqual(0.9);
    });

    it.each(nones.map((c) => [c.id] as const))('recall answers nothing for %s, with a trace saying why', (id) => {
      const inc = answers.get(id);
      expect(inc, 'one incident').toBeDefined();
      expect(inc!.answer).toBeNull();
      expect(inc!.trace.length).toBeGreaterThan(0);
      expect(inc!.trace.every((s) => typeof s.reason === 'string' && s.reason !== '')).toBe(true);
    });
  },
);
