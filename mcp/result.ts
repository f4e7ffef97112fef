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

export function ok(data: object, note?: string): CallToolResult {
  const json = JSON.stringify(data);
  return {
    content: [{ type: 'text', text: note ? `${note}\n${json}` : json }],
    structuredContent: { ...data },
  };
}

export function fail(error: ToolFailure): CallToolResult {
  const next = 'tool' in error.next ? `call ${error.next.tool}` : `a person opens ${error.next.url}`;
  return {
    isError: true,
    content: [{ type: 'text', text: `${error.code}: ${error.detail} Next: ${next} (${error.next.hint})` }],
    structuredContent: { error },
  };
}
