/** Shared OpenAPI pieces for route definitions: the problem body schema, bearer security, JSON helpers. */
import { z } from '@hono/zod-openapi';
import { NextStepSchema } from '../../core/next-step.js';

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    request_id: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    next: NextStepSchema.optional(),
  })
  .openapi('Problem');

export const bearer = [{ bearer: [] }];

export function jsonBody<T extends z.ZodType>(schema: T) {
  return { body: { content: { 'application/json': { schema } }, required: true } };
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { content: { 'application/json': { schema } }, description };
}

/** Responses every authenticated route can give, documented once. */
export const problemResponses = {
  400: {
    content: { 'application/problem+json': { schema: ProblemSchema } },
    description: 'validation_failed / invalid_json',
  },
  401: { content: { 'application/problem+json': { schema: ProblemSchema } }, description: 'unauthorized' },
  403: {
    content: { 'application/problem+json': { schema: ProblemSchema } },
    description: 'insufficient_scope / key_revoked',
  },
} as const;

export const centsField = z.number().int().min(0).max(100_000_000);

/** A 200 JSON answer typed by `schema`, plus the responses every route can give. */
export function okResponses<T extends z.ZodType>(schema: T, description: string) {
  return { 200: jsonResponse(schema, description), ...problemResponses };
}
