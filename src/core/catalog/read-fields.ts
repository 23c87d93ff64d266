import type { LintProblem, LintSeverity, ResourceRef } from '../types.js';
import { parseResourceRef } from './resource-ref.js';

/** Max title size (SPEC §5): it is shown as a one-line chat heading. */
export const MAX_TITLE_BYTES = 120;

/** Collects problems for one file, each pinned to the line of the key it is about. */
export class FieldReader {
  readonly problems: LintProblem[] = [];

  constructor(
    readonly file: string,
    readonly data: Record<string, unknown>,
    private readonly keyLines: ReadonlyMap<string, number>,
    private readonly fallbackLine: number,
  ) {}

  /** File line of `key` in the frontmatter, or of the frontmatter start when absent. */
  line(key: string): number {
    return this.keyLines.get(key) ?? this.fallbackLine;
  }

  report(severity: LintSeverity, rule: string, key: string | number, message: string): void {
    const line = typeof key === 'number' ? key : this.line(key);
    this.problems.push({ file: this.file, line, rule, severity, message });
  }

  has(key: string): boolean {
    return this.data[key] !== undefined && this.data[key] !== null;
  }

  /** Optional string field; a number is accepted as its text (YAML reads `1234` as a number). */
  string(key: string, severity: LintSeverity = 'error'): string | undefined {
    const v = this.data[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v.trim();
    if (typeof v === 'number') return String(v);
    this.report(severity, 'field-type', key, `\`${key}\` must be a string; quote it ("${key}: \\"…\\"")`);
    return undefined;
  }

  /** Optional list of strings; a comma-separated string is accepted with a warning. */
  list(key: string): string[] {
    const v = this.data[key];
    if (v === undefined || v === null) return [];
    if (typeof v === 'string') {
      this.report('warning', 'field-not-list', key, `\`${key}\` should be a YAML list; write \`${key}: [a, b]\``);
      return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
    }
    if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')) {
      return v.map((x) => String(x).trim()).filter((s) => s !== '');
    }
    this.report('error', 'field-type', key, `\`${key}\` must be a list of strings, e.g. \`${key}: [a, b]\``);
    return [];
  }

  /** Optional date: RFC 3339 timestamp or YYYY-MM-DD. */
  date(key: string): string | undefined {
    const v = this.data[key];
    if (v === undefined || v === null) return undefined;
    // A YAML 1.1 document turns bare timestamps into Date objects; take them as meant.
    if (v instanceof Date && !Number.isNaN(v.getTime())) return v.toISOString();
    const s = typeof v === 'string' ? v.trim() : '';
    if (isDate(s)) return s;
    this.report('error', 'date-invalid', key,
      `\`${key}\` must be a date (YYYY-MM-DD) or an RFC 3339 timestamp (2025-06-02T14:03:00Z), got ${JSON.stringify(v)}`);
    return undefined;
  }

  /** Optional resource identity (SPEC §5). */
  resource(key: string): ResourceRef | undefined {
    const s = this.string(key);
    if (s === undefined) return undefined;
    const parsed = parseResourceRef(s);
    if (parsed.ok) return parsed.ref;
    this.report('error', 'resource-invalid', key,
      `\`${key}\` "${s}" is not a resource identity: ${parsed.reason}; write namespace/name, a namespace, or an ARN`);
    return undefined;
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** RFC 3339 timestamp or calendar date that names a real day. */
export function isDate(s: string): boolean {
  if (!DATE.test(s) && !RFC3339.test(s)) return false;
  const day = s.slice(0, 10);
  const t = Date.parse(`${day}T00:00:00Z`);
  // Some engines roll 2025-02-31 over to March instead of failing; compare back.
  if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== day) return false;
  return DATE.test(s) || !Number.isNaN(Date.parse(s.replace(' ', 'T')));
}
