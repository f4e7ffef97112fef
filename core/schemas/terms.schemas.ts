/**
 * Terms documents (provider side) and their acceptance (consumer side): control/terms/terms.service.ts. Shared by
 * the REST routes, the services, MCP tools and the CLI. Plain zod: importing this registers nothing.
 */
import { z } from 'zod';
import { PageOf, Timestamp } from './common.schemas.js';

export const AcceptanceModeSchema = z
  .enum(['required', 'optional'])
  .meta({ description: 'required: calls are refused until an org owner or admin accepts' });

export const TermsDocumentSchema = z
  .object({
    document_id: z.string(),
    api_id: z.string(),
    kind: z.literal('terms'),
    source: z.literal('hosted'),
    version: z.string().meta({ description: 'x.y.z' }),
    acceptance_mode: AcceptanceModeSchema,
    status: z.enum(['created', 'activated']),
    markdown: z.string(),
    created_at: Timestamp,
    activated_at: Timestamp.nullable(),
  })
  .meta({ id: 'TermsDocument' });
export type TermsDocument = z.infer<typeof TermsDocumentSchema>;

export const TermsDocumentListSchema = PageOf(TermsDocumentSchema).meta({ id: 'TermsDocumentList' });
export type TermsDocumentList = z.infer<typeof TermsDocumentListSchema>;

export const ListingTermsSchema = z
  .object({
    slug: z.string(),
    api_id: z.string(),
    document: TermsDocumentSchema.nullable().meta({ description: 'The active document; null when there is none' }),
    required: z.boolean(),
    accepted: z.boolean().meta({ description: "Whether the caller's org accepted this document" }),
    accepted_at: Timestamp.nullable(),
  })
  .meta({ id: 'ListingTerms' });
export type ListingTerms = z.infer<typeof ListingTermsSchema>;

export const TermsAcceptanceSchema = z
  .object({
    slug: z.string(),
    document_id: z.string(),
    version: z.string(),
    accepted: z.literal(true),
    already_accepted: z.boolean(),
    accepted_at: Timestamp,
  })
  .meta({ id: 'TermsAcceptance' });
export type TermsAcceptance = z.infer<typeof TermsAcceptanceSchema>;
