/**
 * `svc terms show|status|accept <slug>`: a listing's provider terms. Accepting needs a session (an owner or admin
 * accepts for the org); with only a key configured the command says so and how to get one.
 */
import { api, config } from '../client.js';
import { str, svcCommand } from '../command.js';
import { CliFailure, usageError } from '../failure.js';
import { describe, interactive } from '../output.js';

const slugArg = { slug: { type: 'positional', description: 'Listing slug' } } as const;

interface Terms {
  slug?: string;
  document?: { document_id: string; version: string; markdown: string } | null;
  accepted?: boolean;
  [k: string]: unknown;
}

const fetchTerms = (slug: string) =>
  api<Terms>('GET', `/v1/apis/${encodeURIComponent(slug)}/terms`, { hint: { slug } });

const show = svcCommand({
  meta: { name: 'show', description: "Show a listing's active terms" },
  args: slugArg,
  examples: ['svc terms show demo-weather'],
  async run({ args }) {
    const t = await fetchTerms(str(args, 'slug')!);
    return { data: t, human: () => describe(t) };
  },
});

const status = svcCommand({
  meta: { name: 'status', description: 'Whether your org accepted the terms' },
  args: slugArg,
  examples: ['svc terms status demo-weather'],
  async run({ args }) {
    const t = await fetchTerms(str(args, 'slug')!);
    return { data: t, human: t.accepted ? 'Accepted.' : `Not accepted: svc terms accept ${str(args, 'slug')}` };
  },
});

const accept = svcCommand({
  meta: { name: 'accept', description: 'Accept the terms for your org (needs a session; asks unless --yes)' },
  args: { ...slugArg, yes: { type: 'boolean', alias: 'y', description: 'Accept without asking' } },
  examples: ['svc terms accept demo-weather', 'svc terms accept demo-weather --yes --json'],
  async run({ args }) {
    const slug = str(args, 'slug')!;
    if (!config().sessionToken)
      throw new CliFailure(
        'api',
        'session_required',
        'Accepting terms needs a session (an org owner or admin), not an API key. Log in first.',
        401,
        'svc login',
      );
    const t = await fetchTerms(slug);
    const doc = t.document ?? null;
    const docId = doc?.document_id;
    if (!args.yes) {
      if (!interactive())
        throw usageError('confirm with --yes (no terminal to ask on)', `svc terms accept ${slug} --yes`);
      const title = /^#\s+(.+)$/m.exec(doc?.markdown ?? '')?.[1] ?? `Terms of ${slug}`;
      const link = `${config().apiUrl}/v1/apis/${encodeURIComponent(slug)}/terms`;
      process.stderr.write(`${title}${doc ? ` (version ${doc.version})` : ''}\n${link}\n`);
      const p = await import('@clack/prompts');
      const ok = await p.confirm({ message: `Accept these terms of ${slug} for your org?` });
      if (p.isCancel(ok) || !ok) throw usageError('not accepted');
    }
    const r = await api('POST', `/v1/apis/${encodeURIComponent(slug)}/terms/accept`, {
      auth: 'session',
      body: docId ? { document_id: docId } : {},
      hint: { slug },
    });
    return { data: r, human: `Accepted the terms of ${slug}${doc?.version ? ` (v${doc.version})` : ''}.` };
  },
});

export default svcCommand({
  meta: { name: 'terms', description: 'Provider terms of a listing (show, status, accept)' },
  examples: ['svc terms show demo-weather'],
  subCommands: { show: async () => show, status: async () => status, accept: async () => accept },
});
