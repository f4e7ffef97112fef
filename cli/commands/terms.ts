/**
 * `svc terms show|status|accept <slug>`: a listing's provider terms. Accepting needs a session (an owner or admin
 * accepts for the org); with only a key configured the command says so and how to get one.
 */
import { ListingTermsSchema, TermsAcceptanceSchema } from '../../core/schemas/terms.schemas.js';
import { api, config } from '../client.js';
import { svcCommand } from '../command.js';
import { CliFailure, usageError } from '../failure.js';
import { interactive, readableTime, relativeTime } from '../output.js';

const slugArg = { slug: { type: 'positional', description: 'Listing slug' } } as const;

const fetchTerms = (slug: string) =>
  api('GET', `/v1/apis/${encodeURIComponent(slug)}/terms`, ListingTermsSchema, { hint: { slug } });

type Terms = Awaited<ReturnType<typeof fetchTerms>>;

/** Where a person reads the terms in a browser: the listing's page (the REST route answers 401 in a browser). */
const pageOf = (slug: string) => `${config().apiUrl}/apis/${encodeURIComponent(slug)}`;

export function termsText(t: Terms): string {
  const d = t.document;
  if (!d) return `${t.slug} has no terms to accept.`;
  const state = t.accepted
    ? `accepted by your org ${relativeTime(t.accepted_at)}`
    : t.required
      ? `not accepted yet: calls are refused until an org owner or admin accepts (svc terms accept ${t.slug})`
      : 'not accepted (optional)';
  return [
    `Terms of ${t.slug}, version ${d.version} (${d.acceptance_mode}), active since ${d.activated_at ? readableTime(d.activated_at) : '-'}`,
    state,
    pageOf(t.slug),
    '',
    d.markdown.trimEnd(),
  ].join('\n');
}

const show = svcCommand({
  meta: { name: 'show', description: "Show a listing's active terms" },
  args: slugArg,
  examples: ['svc terms show demo-weather'],
  async run({ args }) {
    const t = await fetchTerms(args.slug);
    return { data: t, human: termsText(t) };
  },
});

const status = svcCommand({
  meta: { name: 'status', description: 'Whether your org accepted the terms' },
  args: slugArg,
  examples: ['svc terms status demo-weather'],
  async run({ args }) {
    const t = await fetchTerms(args.slug);
    const human = !t.document
      ? 'No terms to accept.'
      : t.accepted
        ? `Accepted ${relativeTime(t.accepted_at)} (version ${t.document.version}).`
        : `Not accepted.\nNext: svc terms accept ${t.slug}`;
    return { data: t, human };
  },
});

const accept = svcCommand({
  meta: { name: 'accept', description: 'Accept the terms for your org (needs a session; asks unless --yes)' },
  args: { ...slugArg, yes: { type: 'boolean', alias: 'y', description: 'Accept without asking' } },
  examples: ['svc terms accept demo-weather', 'svc terms accept demo-weather --yes --json'],
  async run({ args }) {
    const { slug } = args;
    // With only a key, the server's refusal is the answer: it knows whether the key's org has an email to sign in
    // with (next: log_in) or first needs one (next: verify_email; a login would make another org).
    if (!config().sessionToken && config().apiKey)
      await api('POST', `/v1/apis/${encodeURIComponent(slug)}/terms/accept`, TermsAcceptanceSchema, {
        auth: 'key',
        body: {},
        hint: { slug },
      });
    if (!config().sessionToken)
      throw new CliFailure(
        'api',
        'session_required',
        'Accepting terms needs a session (an org owner or admin), not an API key. Log in first.',
        401,
        'svc login',
      );
    const t = await fetchTerms(slug);
    const doc = t.document;
    if (!args.yes) {
      if (!interactive())
        throw usageError('confirm with --yes (no terminal to ask on)', `svc terms accept ${slug} --yes`);
      const title = /^#\s+(.+)$/m.exec(doc?.markdown ?? '')?.[1] ?? `Terms of ${slug}`;
      process.stderr.write(`${title}${doc ? ` (version ${doc.version})` : ''}\n${pageOf(slug)}\n`);
      const p = await import('@clack/prompts');
      const ok = await p.confirm({ message: `Accept these terms of ${slug} for your org?` });
      if (p.isCancel(ok) || !ok) throw usageError('not accepted');
    }
    const r = await api('POST', `/v1/apis/${encodeURIComponent(slug)}/terms/accept`, TermsAcceptanceSchema, {
      auth: 'session',
      body: doc ? { document_id: doc.document_id } : {},
      hint: { slug },
    });
    return { data: r, human: `Accepted the terms of ${slug} (v${r.version}).` };
  },
});

export default svcCommand({
  meta: { name: 'terms', description: 'Provider terms of a listing (show, status, accept)' },
  examples: ['svc terms show demo-weather'],
  subCommands: { show: async () => show, status: async () => status, accept: async () => accept },
});
