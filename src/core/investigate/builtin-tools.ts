/**
 * Reprise's own tools (SPEC §7): the catalog (`kb_search`, `kb_get`), earlier Findings
 * (`prior_findings`) and the trigger's recurrence (`recurrence`). Read-only by construction;
 * still offered only when named on the allowlist.
 */
import type { FindingStore, RecurrenceSource } from '../../ports/investigation-memory.js';
import type { ToolCallResult, ToolInfo, ToolProvider } from '../../ports/tools.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import { kbGet, kbSearch } from '../catalog/kb-read.js';
import type { Incident } from '../types.js';

export const BUILTIN_TOOL_NAMES = ['kb_search', 'kb_get', 'prior_findings', 'recurrence'] as const;

export interface BuiltinToolDeps {
  catalog: CatalogSnapshot;
  findings: FindingStore;
  recurrence?: RecurrenceSource;
  incident: Incident;
}

const TOOLS: ToolInfo[] = [
  {
    name: 'kb_search',
    description: 'Search the knowledge catalog (runbooks, past incidents). Returns ids, titles and descriptions, best first.',
    inputSchema: { type: 'object', properties: { query: { type: 'string' }, k: { type: 'integer', minimum: 1, maximum: 10 } }, required: ['query'] },
    readOnlyHint: true,
  },
  {
    name: 'kb_get',
    description: 'Read one catalog entry in full by id (as returned by kb_search).',
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    readOnlyHint: true,
  },
  {
    name: 'prior_findings',
    description:
      'Earlier findings for this alert on this workload (same trigger), and for similar incidents elsewhere: what was concluded and what was checked then.',
    inputSchema: { type: 'object', properties: { similar: { type: 'boolean', description: 'also include similar incidents of other triggers' } } },
    readOnlyHint: true,
  },
  {
    name: 'recurrence',
    description: 'How often this alert fired on this workload before, when last, and which catalog entry answered it.',
    inputSchema: { type: 'object', properties: {} },
    readOnlyHint: true,
  },
];

const ok = (v: unknown): ToolCallResult => ({ text: JSON.stringify(v, null, 1), isError: false });
const fail = (msg: string): ToolCallResult => ({ text: msg, isError: true });

/** Built-in tools bound to one incident. */
export function builtinTools(deps: BuiltinToolDeps): ToolProvider {
  return {
    server: 'reprise',
    access: 'read',
    builtin: true,
    listTools: async () => TOOLS,
    close: async () => {},
    callTool: async (name, args) => {
      switch (name) {
        case 'kb_search': {
          const query = typeof args['query'] === 'string' ? args['query'] : '';
          if (!query.trim()) return fail('kb_search needs a non-empty "query"');
          const k = typeof args['k'] === 'number' ? Math.min(10, Math.max(1, Math.floor(args['k']))) : 5;
          return ok(kbSearch(deps.catalog, query, k));
        }
        case 'kb_get': {
          const id = typeof args['id'] === 'string' ? args['id'] : '';
          const r = kbGet(deps.catalog, id);
          return 'entry' in r ? ok(r.entry) : fail(r.error);
        }
        case 'prior_findings': {
          const same = await deps.findings.forTrigger(deps.incident.triggerKey, 3);
          const similar =
            args['similar'] === false ? [] : await deps.findings.similar(`${deps.incident.title} ${deps.incident.message}`, 3, deps.incident.triggerKey);
          return ok({ sameTrigger: same, similar });
        }
        case 'recurrence': {
          const facts = deps.recurrence ? await deps.recurrence(deps.incident) : undefined;
          return ok(facts ?? { triggerKey: deps.incident.triggerKey, count: 0, note: 'no earlier occurrence recorded' });
        }
        default:
          return fail(`unknown built-in tool ${name}`);
      }
    },
  };
}
