/**
 * The tools one investigation holds (SPEC §7): providers' tools filtered by the named
 * allowlist, write servers and `readOnlyHint: false` refused, scope rules checked on the
 * arguments, each call under a timeout and a result cap. Every call or refusal is a Step.
 */
import type { ToolSpec } from '../../ports/model.js';
import type { ToolInfo, ToolProvider } from '../../ports/tools.js';
import type { Incident } from '../types.js';
import { fence } from './fence.js';
import { capBytes } from './redact.js';
import { checkScope, type ScopeRule } from './scope.js';
import type { StepRecorder } from './step.js';

export interface ToolPolicy {
  /** Full tool names an investigation may call; no wildcards. */
  allow: readonly string[];
  scope: readonly ScopeRule[];
  callTimeoutMs: number;
  resultCapBytes: number;
}

interface Held {
  name: string;
  provider: ToolProvider;
  info: ToolInfo;
}

/** What the loop gets back from one call: the text for the model and whether it was usable. */
export interface ToolOutcome {
  name: string;
  /** Tool message content for the model (fenced when it is tool output). */
  content: string;
  outcome: 'ok' | 'error' | 'refused' | 'timeout';
  /** Raw (capped) output, for confirm and verify. */
  output: string;
}

/** The full name a tool is offered under: `<server>__<tool>`, or its bare name for a built-in. */
export function offeredName(provider: ToolProvider, tool: string): string {
  return provider.builtin ? tool : `${provider.server}__${tool}`;
}

export class Toolbox {
  /** Allowlisted tools that may be called, by offered name. */
  readonly #usable = new Map<string, Held>();
  /** Allowlisted names that may not: why (write server, readOnlyHint false, not found). */
  readonly #unusable = new Map<string, string>();
  /** Problems met while listing (a server down): reported once at the start of a run. */
  readonly problems: string[] = [];
  readonly #policy: ToolPolicy;

  private constructor(policy: ToolPolicy) {
    this.#policy = policy;
  }

  /** Lists every provider's tools and sorts them into usable and refused. A provider that fails to list is a problem, not a crash. */
  static async open(providers: readonly ToolProvider[], policy: ToolPolicy): Promise<Toolbox> {
    const box = new Toolbox(policy);
    const allowed = new Set(policy.allow);
    const seen = new Set<string>();
    await Promise.all(
      providers.map(async (p) => {
        let tools: ToolInfo[];
        try {
          tools = await p.listTools();
        } catch (err) {
          box.problems.push(`tool server ${p.server} could not list its tools: ${err instanceof Error ? err.message : String(err)}`);
          return;
        }
        for (const info of tools) {
          const name = offeredName(p, info.name);
          seen.add(name);
          if (!allowed.has(name)) continue;
          if (p.access !== 'read') box.#unusable.set(name, `server ${p.server} is declared access: write; only read servers' tools may be used`);
          else if (info.readOnlyHint === false) box.#unusable.set(name, `${name} is marked readOnlyHint: false by its server`);
          else box.#usable.set(name, { name, provider: p, info });
        }
      }),
    );
    for (const name of policy.allow)
      if (!seen.has(name) && !box.#unusable.has(name)) box.#unusable.set(name, `${name} is on the allowlist but no server offers it`);
    return box;
  }

  /** Offered tool names, sorted. */
  get names(): string[] {
    return [...this.#usable.keys()].sort();
  }

  has(name: string): boolean {
    return this.#usable.has(name);
  }

  /** JSON Schema of a usable tool's arguments. */
  schemaOf(name: string): Record<string, unknown> | undefined {
    return this.#usable.get(name)?.info.inputSchema;
  }

  /** Tool specs for the model: only tools it may call. */
  specs(): ToolSpec[] {
    return this.names.map((n) => {
      const h = this.#usable.get(n)!;
      return { name: n, description: h.info.description, parameters: h.info.inputSchema };
    });
  }

  /**
   * Calls a tool under the policy and records the Step. Never throws for the tool's own
   * failures; rethrows when `signal` (the run's) is aborted, so the run can end.
   */
  async call(name: string, args: Record<string, unknown>, incident: Incident, signal: AbortSignal, rec: StepRecorder): Promise<ToolOutcome> {
    const argsText = JSON.stringify(args);
    const refuse = async (reason: string): Promise<ToolOutcome> => {
      await rec.record({ kind: 'tool', tool: name, args: argsText, outcome: 'refused', reason, bytes: 0, truncated: false, durationMs: 0 });
      return { name, content: `refused: ${reason}`, outcome: 'refused', output: '' };
    };
    const held = this.#usable.get(name);
    if (!held) {
      if (!this.#policy.allow.includes(name)) return refuse(`${name} is not on the tool allowlist`);
      return refuse(this.#unusable.get(name) ?? `${name} is not available`);
    }
    const scope = checkScope(this.#policy.scope, incident, args, argNames(held.info.inputSchema));
    if (!scope.ok) return refuse(scope.reason);

    const started = performance.now();
    const ctl = new AbortController();
    const onRunAbort = (): void => ctl.abort(signal.reason);
    signal.addEventListener('abort', onRunAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new Error(`timed out after ${this.#policy.callTimeoutMs} ms`);
        ctl.abort(err);
        reject(err);
      }, this.#policy.callTimeoutMs);
    });
    const aborted = new Promise<never>((_, reject) => ctl.signal.addEventListener('abort', () => reject(ctl.signal.reason), { once: true }));
    try {
      const res = await Promise.race([
        held.provider.callTool(held.info.name, args, { signal: ctl.signal, timeoutMs: this.#policy.callTimeoutMs }),
        timeout,
        aborted,
      ]);
      // Secrets a tool printed (an env dump, a config map) never reach the model or a Step.
      const capped = capBytes(rec.redact(res.text), this.#policy.resultCapBytes);
      const durationMs = Math.round(performance.now() - started);
      const outcome = res.isError ? 'error' : 'ok';
      await rec.record({
        kind: 'tool',
        tool: name,
        args: argsText,
        outcome,
        ...(res.isError ? { reason: 'the tool reported an error' } : {}),
        bytes: capped.bytes,
        truncated: capped.truncated,
        result: capped.text,
        durationMs,
      });
      const note = capped.truncated ? `\n[truncated: showing ${Buffer.byteLength(capped.text)} of ${capped.bytes} bytes]` : '';
      return { name, content: fence(`tool result ${name}${res.isError ? ' (error)' : ''}`, capped.text) + note, outcome, output: capped.text };
    } catch (err) {
      const durationMs = Math.round(performance.now() - started);
      if (signal.aborted) {
        await rec.record({
          kind: 'tool',
          tool: name,
          args: argsText,
          outcome: 'error',
          reason: `run stopped: ${reasonText(signal.reason)}`,
          bytes: 0,
          truncated: false,
          durationMs,
        });
        throw signal.reason;
      }
      const timedOut = ctl.signal.aborted && !signal.aborted;
      const reason = timedOut ? `timed out after ${this.#policy.callTimeoutMs} ms` : reasonText(err);
      await rec.record({ kind: 'tool', tool: name, args: argsText, outcome: timedOut ? 'timeout' : 'error', reason, bytes: 0, truncated: false, durationMs });
      return { name, content: `${timedOut ? 'timeout' : 'error'}: ${reason}`, outcome: timedOut ? 'timeout' : 'error', output: '' };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onRunAbort);
    }
  }
}

/** Top-level argument names a tool's JSON Schema declares. */
function argNames(schema: Record<string, unknown> | undefined): string[] {
  const props = schema?.['properties'];
  return props && typeof props === 'object' && !Array.isArray(props) ? Object.keys(props) : [];
}

export function reasonText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
