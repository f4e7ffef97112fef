/** `svc provider documents list|create|activate`: legal documents (terms) attached to a listing. */
import { readFileSync } from 'node:fs';
import { TermsDocumentListSchema, TermsDocumentSchema } from '../../../core/schemas/terms.schemas.js';
import { api } from '../../client.js';
import { svcCommand } from '../../command.js';
import { usageError } from '../../failure.js';
import { table } from '../../output.js';

const list = svcCommand({
  meta: { name: 'list', description: 'Your legal documents' },
  args: { 'api-id': { type: 'string', description: 'Only this API' } },
  examples: ['svc provider documents list'],
  async run({ args }) {
    const r = await api('GET', '/v1/provider/documents', TermsDocumentListSchema, {
      query: { api_id: args['api-id'] },
    });
    return {
      data: r,
      human: () =>
        table(r.data, ['document_id', 'api_id', 'kind', 'version', 'acceptance_mode', 'status', 'activated_at']),
    };
  },
});

const create = svcCommand({
  meta: { name: 'create', description: 'Create a document from a markdown file' },
  args: {
    kind: { type: 'enum', options: ['terms'], default: 'terms', description: 'Document kind' },
    source: { type: 'enum', options: ['hosted'], default: 'hosted', description: 'Where it lives' },
    version: { type: 'string', required: true, description: 'x.y.z' },
    markdown: { type: 'string', required: true, description: 'Path of the markdown file' },
    'api-id': { type: 'string', required: true, description: 'api_… id' },
    'acceptance-mode': {
      type: 'enum',
      options: ['required', 'optional'],
      default: 'required',
      description: 'Must consumers accept?',
    },
  },
  examples: ['svc provider documents create --api-id api_01jd… --version 1.0.0 --markdown terms.md'],
  async run({ args }) {
    let markdown: string;
    try {
      markdown = readFileSync(args.markdown, 'utf8');
    } catch {
      throw usageError(`cannot read ${args.markdown}`);
    }
    const body = {
      kind: args.kind,
      source: args.source,
      version: args.version,
      markdown,
      api_id: args['api-id'],
      acceptance_mode: args['acceptance-mode'],
    };
    const r = await api('POST', '/v1/provider/documents', TermsDocumentSchema, { body });
    return {
      data: r,
      human: `Document ${r.document_id} created.\nNext: svc provider documents activate ${r.document_id}`,
    };
  },
});

const activate = svcCommand({
  meta: { name: 'activate', description: 'Activate a document' },
  args: { id: { type: 'positional', description: 'doc_… id' } },
  examples: ['svc provider documents activate doc_01jd…'],
  async run({ args }) {
    const r = await api('POST', `/v1/provider/documents/${encodeURIComponent(args.id)}/activate`, TermsDocumentSchema);
    return { data: r, human: `Document ${r.document_id} (version ${r.version}) is active for ${r.api_id}.` };
  },
});

export default svcCommand({
  meta: { name: 'documents', description: 'Legal documents (list, create, activate)' },
  examples: ['svc provider documents list'],
  subCommands: { list: async () => list, create: async () => create, activate: async () => activate },
});
