/**
 * The tool port (SPEC §7): a source of tools an investigation may call — an MCP server, or
 * the built-ins over the catalog and the ledger. Policy (allowlist, read-only, scope,
 * timeout, size cap) is the engine's, not the provider's.
 */

/** What a server declares about one of its tools. */
export interface ToolInfo {
  /** The tool's own name on its server (`pod_status`). */
  name: string;
  description: string;
  /** JSON Schema of its arguments. */
  inputSchema: Record<string, unknown>;
  /** MCP `readOnlyHint`; `false` makes the tool unusable, `true` or absent leaves the server's `access` as the guard. */
  readOnlyHint?: boolean;
}

export interface ToolCallResult {
  /** Text content, joined; non-text content summarised. */
  text: string;
  /** The tool reported an error (MCP `isError`). */
  isError: boolean;
}

export interface ToolCallOptions {
  /** Aborted on timeout, on wall time and on cancellation. */
  signal: AbortSignal;
  timeoutMs: number;
}

/** One source of tools. `server` names it; its tools are offered as `<server>__<tool>`. */
export interface ToolProvider {
  readonly server: string;
  /** `read` or `write`, as the operator declared it; only `read` servers' tools are usable. */
  readonly access: 'read' | 'write';
  /** True for Reprise's own tools, offered under their bare names (`kb_search`). */
  readonly builtin?: boolean;
  listTools(): Promise<ToolInfo[]>;
  /** Calls one tool by its own name; rejects on transport errors and timeouts. */
  callTool(name: string, args: Record<string, unknown>, opts: ToolCallOptions): Promise<ToolCallResult>;
  close(): Promise<void>;
}
