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

/** POST /v1/provider/legal-documents: a terms version for one listing. */
export const TermsDocumentInputSchema = z
  .object({
    kind: z.literal('terms'),
    source: z.literal('hosted'),
    version: z.string().regex(/^\d{1,6}\.\d{1,6}\.\d{1,6}$/, 'version must be x.y.z'),
    markdown: z.string().min(1).max(200_000),
    api_id: z.string().min(1).max(64),
    acceptance_mode: z.enum(['required', 'optional']).optional(),
    'acceptance-mode': z
      .enum(['required', 'optional'])
      .optional()
      .meta({ description: "The spec's spelling; same as acceptance_mode (send one)" }),
  })
  .strict()
  .refine((d) => (d.acceptance_mode === undefined) !== (d['acceptance-mode'] === undefined), {
    message: 'send acceptance_mode (or acceptance-mode), exactly one',
    path: ['acceptance_mode'],
  });

/** POST /v1/apis/{slug}/terms/accept and accept_terms: which version the person read. */
export const TermsAcceptInputSchema = z
  .object({
    document_id: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({ description: 'The document you read; refused if a newer version is active' }),
  })
  .strict();

/** One API whose current terms the org has not accepted, though it called the API or was refused with 428. */
export const PendingTermsItemSchema = z
  .object({
    api_slug: z.string(),
    api_name: z.string(),
    document_id: z.string(),
    version: z.string(),
    acceptance_mode: z.enum(['required', 'optional']),
    refused_at: Timestamp.nullable().meta({ description: 'Last call refused with 428 for these terms, if any' }),
    accept_url: z.string().meta({ description: 'The page where an org owner or admin reads and accepts them' }),
  })
  .meta({ id: 'PendingTerms' });
export type PendingTermsItem = z.infer<typeof PendingTermsItemSchema>;

/** GET /v1/terms/pending: every such API, required ones first, then by name. */
export const PendingTermsListSchema = z
  .object({ data: z.array(PendingTermsItemSchema) })
  .meta({ id: 'PendingTermsList' });
export type PendingTermsList = z.infer<typeof PendingTermsListSchema>;
