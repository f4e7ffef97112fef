/**
 * Tool results: data as `structuredContent` (matching the tool's outputSchema) plus the same JSON as text, and
 * domain failures as `isError: true` with `{ error: { code, detail, next } }`, where `next` names a tool to call or
 * a page a person opens. JSON-RPC errors stay for protocol faults.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ErrorCode } from '../core/errors.js';

/** The next step in MCP terms: a tool to call, or a page a person opens in a browser. */
export type McpNextStep = { tool: string; hint: string } | { url: string; hint: string };

export interface ToolFailure {
  code: ErrorCode;
  detail: string;
  next: McpNextStep;
  [extra: string]: unknown;
}

/**
 * The JSON text of a result's structuredContent made by `ok`, which serializes that very data for the text
 * content: the fast path's answer (mcp/fast-tool-call.ts answerBytes) reuses it rather than serializing it again.
 * Keyed by the structuredContent object itself, so a result built any other way has no entry and is serialized.
 */
const structuredJson = new WeakMap<object, string>();

export function ok(data: object, note?: string): CallToolResult {
  const json = JSON.stringify(data);
  const structuredContent = { ...data };
  // The spread copy has the same own members in the same order: its JSON is the same text.
  structuredJson.set(structuredContent, json);
  return {
    content: [{ type: 'text', text: note ? `${note}\n${json}` : json }],
    structuredContent,
  };
}

/** The JSON text of a structuredContent object, as JSON.stringify gives it (remembered when `ok` made it). */
export const jsonOfStructured = (sc: unknown): string =>
  (typeof sc === 'object' && sc !== null ? structuredJson.get(sc) : undefined) ?? JSON.stringify(sc);

export function fail(error: ToolFailure): CallToolResult {
  const next = 'tool' in error.next ? `call ${error.next.tool}` : `a person opens ${error.next.url}`;
  return {
    isError: true,
    content: [{ type: 'text', text: `${error.code}: ${error.detail} Next: ${next} (${error.next.hint})` }],
    structuredContent: { error },
  };
}
