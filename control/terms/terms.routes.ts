/**
 * Terms: provider documents (`/v1/provider/documents`, provider:write) and the consumer side
 * (`GET /v1/apis/:slug/terms` with any credential, `POST .../accept` with an owner/admin session only).
 */
import { createRoute, z } from '@hono/zod-openapi';
import { newRouter, optionalJsonBody } from '../lib/http.js';
import { bearer, jsonBody, jsonResponse, okResponses, problemResponses } from '../lib/openapi.js';
import { PaginationQuerySchema } from '../../core/schemas/common.schemas.js';
import {
  acceptListingTerms,
  activateDocument,
  createDocument,
  documentPage,
  listingTerms,
  toDocument,
} from './terms.service.js';
import { pendingTerms } from './pending-terms.service.js';
import {
  ListingTermsSchema,
  PendingTermsListSchema,
  TermsAcceptanceSchema,
  TermsAcceptInputSchema,
  TermsDocumentInputSchema,
  TermsDocumentListSchema,
  TermsDocumentSchema,
} from '../../core/schemas/terms.schemas.js';

export const termsRoutes = newRouter();

const SlugParam = z.object({
  slug: z
    .string()
    .min(1)
    .max(80)
    .openapi({ param: { name: 'slug', in: 'path' } }),
});
const DocIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

termsRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/provider/documents',
    tags: ['provider'],
    security: bearer,
    request: jsonBody(TermsDocumentInputSchema),
    responses: { 201: jsonResponse(TermsDocumentSchema, 'The document, status created'), ...problemResponses },
  }),
  async (c) => {
    const { 'acceptance-mode': alias, acceptance_mode, ...doc } = c.req.valid('json');
    const input = { ...doc, acceptance_mode: (acceptance_mode ?? alias)! };
    return c.json(toDocument(await createDocument(c.get('ctx'), c.get('principal'), input)), 201);
  },
);

termsRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/provider/documents',
    tags: ['provider'],
    security: bearer,
    request: { query: PaginationQuerySchema.extend({ api_id: z.string().max(64).optional() }) },
    responses: okResponses(TermsDocumentListSchema, 'Documents of the org, newest first (paged)'),
  }),
  async (c) => {
    const q = c.req.valid('query');
    return c.json(await documentPage(c.get('ctx').db, c.get('principal'), q.api_id, q.limit, q.offset), 200);
  },
);

termsRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/provider/documents/{id}/activate',
    tags: ['provider'],
    security: bearer,
    request: { params: DocIdParam },
    responses: okResponses(TermsDocumentSchema, 'Activated: consumers must accept it again when required'),
  }),
  async (c) => {
    return c.json(toDocument(await activateDocument(c.get('ctx'), c.get('principal'), c.req.valid('param').id)), 200);
  },
);

termsRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/apis/{slug}/terms',
    tags: ['terms'],
    security: bearer,
    request: { params: SlugParam },
    responses: okResponses(ListingTermsSchema, "The listing's active terms and whether the caller's org accepted them"),
  }),
  async (c) => {
    return c.json(await listingTerms(c.get('ctx').db, c.get('principal'), c.req.valid('param').slug), 200);
  },
);

termsRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/v1/apis/{slug}/terms/accept',
    tags: ['terms'],
    security: bearer,
    request: {
      params: SlugParam,
      body: { content: { 'application/json': { schema: TermsAcceptInputSchema } }, required: false },
    },
    responses: okResponses(TermsAcceptanceSchema, 'Accepted for the whole org (idempotent)'),
  }),
  async (c) => {
    const body = await optionalJsonBody(c, TermsAcceptInputSchema);
    const { slug } = c.req.valid('param');
    return c.json(await acceptListingTerms(c.get('ctx'), c.get('principal'), slug, body.document_id), 200);
  },
);

termsRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/v1/terms/pending',
    tags: ['terms'],
    security: bearer,
    responses: okResponses(
      PendingTermsListSchema,
      "APIs the caller's org called or was refused (428) whose current terms it has not accepted",
    ),
  }),
  async (c) => {
    return c.json(await pendingTerms(c.get('ctx').db, c.get('principal')), 200);
  },
);
