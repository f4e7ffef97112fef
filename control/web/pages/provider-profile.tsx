/**
 * The provider's public profile (what `/providers/<slug>` and every listing card show): display name, slug, bio,
 * website and logo. Parsed with `ProfileUpdateInputSchema`, saved by `updateMyProfile` (the service behind
 * PATCH /v1/provider/profile and update_my_profile); a refusal comes back beside the field.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { getMyProfile, updateMyProfile } from '../../providers/profile.service.js';
import { ProfileUpdateInputSchema } from '../../../core/schemas/providers.schemas.js';
import { SvcError } from '../../../core/errors.js';
import { FormErrors, TextArea, TextField, patchOf } from '../fields.js';
import { fieldErrorsOf, fieldErrorsOfSvc, formObject, type FieldLabel, type FormState } from '../form.js';
import { renderPage } from '../layout.js';
import { newWebRouter, type WebEnv } from '../web-env.js';
import { requireWebSession } from '../web-session.js';
import { Form } from './provider.js';

export const providerProfilePages = newWebRouter();

const LABELS: Record<string, FieldLabel> = {
  display_name: { label: 'Public name' },
  slug: { label: 'Address' },
  bio: { label: 'About' },
  website: { label: 'Website' },
  logo_url: { label: 'Logo URL' },
};

async function profilePage(c: Context<WebEnv>, refused?: FormState, code: ContentfulStatusCode = 200) {
  const p = requireWebSession(c);
  const ctx = c.get('ctx');
  const current = await getMyProfile(ctx, p).catch((e: unknown) => {
    if (e instanceof SvcError && e.code === 'not_found') return undefined; // first save creates it
    throw e;
  });
  return renderPage(
    c,
    { title: 'Your public profile', status: code },
    <>
      <p>
        People see this on <a href="/providers">the provider directory</a> and beside each of your listings.
        {current ? (
          <>
            {' '}
            Yours is at <a href={`/providers/${current.slug}`}>/providers/{current.slug}</a>.
          </>
        ) : (
          ' Nobody sees it until you save it or publish a listing.'
        )}
      </p>
      <Form c={c} action="/provider/profile">
        <FormErrors errors={refused?.errors} />
        <TextField
          form="profile"
          name="display_name"
          label="Public name"
          hint="your company or your name, as people should read it"
          value={current?.display_name}
          maxlength={100}
          state={refused}
        />
        <TextField
          form="profile"
          name="slug"
          label="Address"
          hint="lowercase letters, digits and dashes: /providers/<address>"
          value={current?.slug}
          maxlength={60}
          state={refused}
        />
        <TextArea
          form="profile"
          name="bio"
          label="About"
          hint="markdown, up to 2,000 characters"
          value={current?.bio ?? ''}
          rows={5}
          state={refused}
        />
        <TextField
          form="profile"
          name="website"
          label="Website"
          type="url"
          value={current?.website ?? ''}
          placeholder="https://example.com"
          state={refused}
        />
        <TextField
          form="profile"
          name="logo_url"
          label="Logo URL"
          type="url"
          value={current?.logo_url ?? ''}
          placeholder="https://example.com/logo.png"
          state={refused}
        />
        <div>
          <button type="submit">Save profile</button>
        </div>
      </Form>
    </>,
  );
}

providerProfilePages.get('/provider/profile', (c) => profilePage(c));

providerProfilePages.post('/provider/profile', async (c) => {
  const p = requireWebSession(c);
  const values = await formObject(c);
  const patch = patchOf(
    values,
    ['display_name', 'slug', 'bio', 'website', 'logo_url'],
    { bio: null, website: null, logo_url: null },
    ['bio'],
  );
  const parsed = ProfileUpdateInputSchema.safeParse(patch);
  if (!parsed.success) return profilePage(c, { values, errors: fieldErrorsOf(parsed.error, LABELS) }, 400);
  try {
    await updateMyProfile(c.get('ctx'), p, parsed.data);
  } catch (e) {
    const errors = fieldErrorsOfSvc(e, LABELS);
    if (e instanceof SvcError && e.code === 'conflict')
      delete errors._form, (errors.slug = 'That address is taken: choose another.');
    return profilePage(c, { values, errors }, e instanceof SvcError ? (e.status as ContentfulStatusCode) : 400);
  }
  return c.redirect('/provider/profile?saved=1', 303);
});
