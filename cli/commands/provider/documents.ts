/** `svc provider documents list|create|activate`: legal documents (terms) attached to a listing. */
import { readFileSync } from 'node:fs';
import { api } from '../../client.js';
import { str, svcCommand } from '../../command.js';
import { usageError } from '../../failure.js';
import { describe, table } from '../../output.js';

const list = svcCommand({
  meta: { name: 'list', description: 'Your legal documents' },
  args: { 'api-id': { type: 'string', description: 'Only this API' } },
  examples: ['svc provider documents list'],
  async run({ args }) {
    const r = await api<{ data: Record<string, unknown>[] }>('GET', '/v1/provider/documents', {
      query: { api_id: str(args, 'api-id') },
    });
    return {
      data: r,
      human: () => table(r.data ?? [], ['document_id', 'api_id', 'kind', 'version', 'acceptance_mode', 'status']),
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
      markdown = readFileSync(str(args, 'markdown')!, 'utf8');
    } catch {
      throw usageError(`cannot read ${str(args, 'markdown')}`);
    }
    const body = {
      kind: str(args, 'kind'),
      source: str(args, 'source'),
      version: str(args, 'version'),
      markdown,
      api_id: str(args, 'api-id'),
      acceptance_mode: str(args, 'acceptance-mode'),
    };
    const r = await api<{ document_id: string }>('POST', '/v1/provider/documents', { body });
    return {
      data: r,
      human: `Document ${r.document_id} created. Activate it: svc provider documents activate ${r.document_id}`,
    };
  },
});

const activate = svcCommand({
  meta: { name: 'activate', description: 'Activate a document' },
  args: { id: { type: 'positional', description: 'doc_… id' } },
  examples: ['svc provider documents activate doc_01jd…'],
  async run({ args }) {
    const r = await api('POST', `/v1/provider/documents/${encodeURIComponent(str(args, 'id')!)}/activate`);
    return { data: r, human: () => describe(r) };
  },
});

export default svcCommand({
  meta: { name: 'documents', description: 'Legal documents (list, create, activate)' },
  examples: ['svc provider documents list'],
  subCommands: { list: async () => list, create: async () => create, activate: async () => activate },
});
