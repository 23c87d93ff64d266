/**
 * The catalog served to other agents over MCP (`reprise mcp`, issue 7 item 5): four read-only
 * tools over the same catalog snapshot, recall engine and ledger aggregates the bot uses.
 * Nothing here writes: every tool carries `readOnlyHint: true` and only reads its inputs.
 * Each answer is a human text block plus the same data as `structuredContent`.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { parseAlertmanagerPayload } from '../../core/alertmanager.js';
import type { IdentityOptions } from '../../core/identity.js';
import { kbGet, kbSearch } from '../../core/catalog/kb-read.js';
import { isRepriseError } from '../../core/errors.js';
import type { LedgerReader } from '../../core/ledger/ledger-reader.js';
import type { CatalogSnapshot } from '../../core/recall/catalog-snapshot.js';
import { recall, type RecallOptions } from '../../core/recall/recall.js';
import { recallReport } from '../../core/recall/recall-report.js';
import type { AnswerKind } from '../../core/types.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';

/**
 * Input bounds. Protocol limits rather than tuning: they keep one call from costing more than
 * an alert webhook does (the label/annotation value bound is the webhook's `field_limit_chars`).
 */
export const MCP_LIMITS = {
  /** Longest `kb_search` query, in characters. */
  queryChars: 2000,
  /** Most `kb_search` results. */
  searchResults: 20,
  /** Longest entry id (`kb_get`, `track_record`). */
  idChars: 512,
  /** Most labels, and most annotations, on a `recall` alert. */
  alertFields: 64,
  /** Longest label or annotation name. */
  fieldNameChars: 128,
  /** Most values in one call's arguments, nested ones counted (the SDK checks before parsing). */
  inputElements: 512,
} as const;

/** The ledger as the tools read it; `refresh` follows the bot's appends. */
export interface TrackRecordSource {
  /** Follows the bot's appends (re-reads the store when it moved). */
  refresh(): Promise<void>;
  readonly read: Pick<LedgerReader, 'seq' | 'trackRecord'>;
}

export interface CatalogMcpDeps {
  catalog: () => CatalogSnapshot;
  ledger: TrackRecordSource;
  recallOptions: RecallOptions;
  /** Longest label or annotation value on a `recall` alert (`server.field_limit_chars`). */
  fieldLimit: number;
  /** How the alert's identity is derived (`identity.labels`), as the webhook derives it. */
  identity?: IdentityOptions;
  logger: Logger;
  clock?: Clock;
  version?: string;
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

function result(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}
function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

const round = (n: number): number => Math.round(n * 1000) / 1000;

/** Builds the server with its four tools; connect it to a transport (stdio, Streamable HTTP). */
export function createCatalogMcpServer(deps: CatalogMcpDeps): McpServer {
  const clock = deps.clock ?? systemClock;
  const log = deps.logger.child({ component: 'mcp' });
  const server = new McpServer(
    { name: 'reprise', version: deps.version ?? '0.1.0' },
    {
      maxToolInputElements: MCP_LIMITS.inputElements,
      instructions:
        "Reprise on-call memory, read-only: kb_search and kb_get read the runbook/incident catalog; recall tells what Reprise would answer for an alert (with the gate trace explaining why); track_record gives an entry's recorded outcomes.",
    },
  );
  const entryId = z.string().min(1).max(MCP_LIMITS.idChars);
  const fields = (what: string) =>
    z
      .record(z.string().min(1).max(MCP_LIMITS.fieldNameChars), z.string().max(deps.fieldLimit))
      .refine((r) => Object.keys(r).length <= MCP_LIMITS.alertFields, { message: `at most ${MCP_LIMITS.alertFields} ${what}` });

  server.registerTool(
    'kb_search',
    {
      title: 'Search the catalog',
      description:
        "Search the knowledge catalog (runbooks, past incidents, concepts) with Reprise's own ranking (BM25). Returns entry ids, titles, kinds and scores, best first; read one with kb_get.",
      inputSchema: {
        query: z.string().min(1).max(MCP_LIMITS.queryChars).describe('Free text: alert name, symptom, workload…'),
        limit: z.number().int().min(1).max(MCP_LIMITS.searchResults).optional().describe(`How many results (default 5, at most ${MCP_LIMITS.searchResults})`),
      },
      annotations: { title: 'Search the catalog', ...READ_ONLY },
    },
    async ({ query, limit }) => {
      const hits = kbSearch(deps.catalog(), query, limit ?? 5);
      const results = hits.map((h) => ({ id: h.id, title: h.title, kind: h.type, score: h.score, status: h.status, description: h.description }));
      const text =
        results.length === 0
          ? `no catalog entry matches "${query}"`
          : results.map((r, i) => `${i + 1}. ${r.id} (${r.kind}, score ${r.score}) — ${r.title}`).join('\n');
      return result(text, { query, results });
    },
  );

  server.registerTool(
    'kb_get',
    {
      title: 'Read a catalog entry',
      description: 'Read one catalog entry in full by its id (as kb_search returns it): frontmatter fields and the markdown body.',
      inputSchema: { id: entryId.describe('Entry id, e.g. incidents/checkout-api-oomkilled.md') },
      annotations: { title: 'Read a catalog entry', ...READ_ONLY },
    },
    async ({ id }) => {
      const r = kbGet(deps.catalog(), id);
      if ('error' in r) return toolError(r.error);
      const e = r.entry;
      return result(`# ${e.title}\n(${e.id} · ${e.type} · ${e.status}${e.resource ? ` · ${e.resource}` : ''})\n\n${e.body}`, { ...e });
    },
  );

  server.registerTool(
    'recall',
    {
      title: 'What would Reprise recall?',
      description:
        "What Reprise's recall answers for one firing alert (Alertmanager labels and annotations): the answer (instant recall of a past incident, or a runbook) with its confidence, the near miss, and the full gate trace saying why each candidate passed or failed. Records nothing.",
      inputSchema: {
        labels: fields('labels').describe(
          'Alert labels; alertname is required (e.g. {"alertname":"KubePodCrashLooping","namespace":"payments","pod":"checkout-api-7d9f8c6b5-x2k4q"})',
        ),
        annotations: fields('annotations').optional().describe('Alert annotations (summary, description, runbook_url…)'),
      },
      annotations: { title: 'What would Reprise recall?', ...READ_ONLY },
    },
    async ({ labels, annotations }) => {
      const now = clock.now();
      let incident;
      try {
        [incident] = parseAlertmanagerPayload(
          { alerts: [{ status: 'firing', labels, annotations: annotations ?? {} }] },
          { receivedAt: now.toISOString(), fieldLimit: deps.fieldLimit, ...(deps.identity ? { identity: deps.identity } : {}) },
        ).incidents;
      } catch (err) {
        if (isRepriseError(err)) return toolError(`not a usable alert: ${err.message.replace(/alerts\[0\]\./g, '')}`);
        throw err;
      }
      if (!incident) return toolError('not a usable alert');
      await deps.ledger.refresh();
      const r = recall(incident, deps.catalog(), (entry, kind) => deps.ledger.read.trackRecord(entry, kind, now), deps.recallOptions, now);
      const report = recallReport(incident, r);
      const a = report.answer;
      const lines = [
        `${report.triggerKey}`,
        `answer: ${a ? `${a.kind === 'incident' ? '⚡ instant recall' : '📚 runbook'} ${a.entry} @ ${a.confidence}` : 'none'}`,
        ...(report.nearMiss ? [`near miss: ${report.nearMiss.entry} (${report.nearMiss.gate}: ${report.nearMiss.reason})`] : []),
        'gate trace:',
        ...report.trace.map((t) => `  ${t.passed ? '✓' : '✗'} ${t.gate} ${t.entry ?? ''} — ${t.reason}`),
      ];
      return result(lines.join('\n'), { ...report, ledgerSeq: deps.ledger.read.seq });
    },
  );

  server.registerTool(
    'track_record',
    {
      title: "An entry's track record",
      description:
        "The recorded outcomes of one catalog entry from Reprise's ledger: recalls, resolved, failed, in flight, 👍/👎, confirmations, last resolved, and the smoothed outcome rate the recall gate compares to its floor. Zeros when nothing was recorded.",
      inputSchema: {
        entry: entryId.describe('Entry id, e.g. incidents/checkout-api-oomkilled.md'),
        kind: z
          .enum(['incident', 'runbook'])
          .optional()
          .describe('Grade it as an instant recall or as a runbook (default: from the entry — resource-scoped entries are instant recalls)'),
      },
      annotations: { title: "An entry's track record", ...READ_ONLY },
    },
    async ({ entry, kind }) => {
      const known = deps.catalog().byId.get(entry);
      const answerKind: AnswerKind = kind ?? (known && !known.resource ? 'runbook' : 'incident');
      await deps.ledger.refresh();
      const t = deps.ledger.read.trackRecord(entry, answerKind, clock.now());
      const floor = deps.recallOptions.outcomeFloor;
      const passes = t.withheld || t.rate >= floor;
      const structured = {
        entry,
        inCatalog: known !== undefined,
        kind: answerKind,
        recalls: t.recalls,
        resolved: t.resolved,
        failed: t.failed,
        inFlight: t.inFlight,
        up: t.up,
        down: t.down,
        confirmations: t.confirmations,
        effectiveDown: t.effectiveDown,
        lastResolved: t.lastResolved ?? null,
        rate: round(t.rate),
        factor: round(t.factor),
        withheld: t.withheld,
        outcomeFloor: floor,
        passesOutcomeGate: passes,
        ledgerSeq: deps.ledger.read.seq,
      };
      const text = [
        `${entry}${known ? '' : ' (not in the served catalog)'} as ${answerKind === 'incident' ? 'an instant recall' : 'a runbook'}:`,
        `recalls ${t.recalls}, resolved ${t.resolved}, failed ${t.failed}, in flight ${t.inFlight}; 👍 ${t.up} 👎 ${t.down}; confirmations ${t.confirmations}; last resolved ${t.lastResolved ?? 'never'}`,
        t.withheld
          ? `outcome gate: not graded yet (rate ${round(t.rate)} not applied) — passes`
          : `outcome gate: rate ${round(t.rate)} ${passes ? '≥' : '<'} floor ${floor} — ${passes ? 'passes' : 'rejected'}; confidence factor ${round(t.factor)}`,
      ].join('\n');
      return result(text, structured);
    },
  );

  server.server.onerror = (err) => log.warn({ err }, `mcp protocol error: ${err.message}`);
  return server;
}
