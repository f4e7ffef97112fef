/**
 * The one page layout: header with navigation and the signed-in person (with sign-out), main content, footer.
 * `renderPage` is how every page answers; JSX escapes every interpolated value, so provider text stays text.
 */
import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { FAVICON_HREF, STYLE_HREF } from './assets/assets.routes.js';
import { csrfField } from './csrf.js';
import type { WebEnv } from './web-env.js';

export interface PageOptions {
  title: string;
  status?: ContentfulStatusCode;
  /** Shown above the page title, e.g. the test-payments "no real money" notice. */
  banner?: Child;
  /** Short meta description for the page. */
  description?: string;
  /** Our own content-hashed scripts this page loads (after `main`, deferred), e.g. the listing console's. */
  scripts?: string[];
}

type LayoutProps = Omit<PageOptions, 'status'> & { c: Context<WebEnv>; children?: Child };

function Layout(props: LayoutProps) {
  const { c } = props;
  const session = c.get('webSession');
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>{`${props.title} · svc`}</title>
        {props.description ? <meta name="description" content={props.description} /> : null}
        <link rel="stylesheet" href={STYLE_HREF} />
        <link rel="icon" href={FAVICON_HREF} type="image/svg+xml" />
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="site">
          <a class="brand" href="/">
            svc
          </a>
          <nav aria-label="Main">
            <ul>
              <li>
                <a href="/catalog">Catalog</a>
              </li>
              <li>
                <a href="/leaderboards">Leaderboards</a>
              </li>
              <li>
                <a href="/market">Market</a>
              </li>
              <li>
                <a href="/providers">Providers</a>
              </li>
              {session ? (
                <>
                  <li>
                    <a href="/dashboard">Dashboard</a>
                  </li>
                  <li>
                    <a href="/provider">Provider area</a>
                  </li>
                </>
              ) : null}
            </ul>
          </nav>
          <div class="who">
            {session ? (
              <>
                <span>{session.email}</span>
                <form class="inline" method="post" action="/logout">
                  {csrfField(c)}
                  <button class="link" type="submit">
                    Sign out
                  </button>
                </form>
              </>
            ) : (
              <a href="/login">Sign in</a>
            )}
          </div>
        </header>
        <main id="main">
          {props.banner ?? null}
          <h1>{props.title}</h1>
          {props.children}
        </main>
        {props.scripts?.map((src) => (
          <script src={src} defer />
        ))}
        <footer class="site">
          svc: a self-hosted API marketplace · <a href="/v1/openapi.json">REST API</a>
        </footer>
      </body>
    </html>
  );
}

export async function renderPage(c: Context<WebEnv>, opts: PageOptions, body: Child): Promise<Response> {
  const html = await (
    <Layout c={c} title={opts.title} banner={opts.banner} description={opts.description} scripts={opts.scripts}>
      {body}
    </Layout>
  ).toString();
  return c.html(`<!doctype html>${html}`, opts.status ?? 200);
}
