/** The front page: what svc is, where to start (catalog, sign-in, dashboard). */
import { renderPage } from '../layout.js';
import { newWebRouter } from '../web-env.js';

export const homeRoutes = newWebRouter();

homeRoutes.get('/', (c) => {
  const session = c.get('webSession');
  return renderPage(
    c,
    { title: 'APIs with metered, prepaid access', description: 'A marketplace of third-party HTTP APIs.' },
    <>
      <p>
        Find an API in the catalog, buy credits, and call it through one gateway with one key. Providers list their
        APIs, set per-call prices and get paid out.
      </p>
      <p>
        <a class="button" href="/catalog">
          Browse the catalog
        </a>{' '}
        {session ? (
          <a class="button secondary" href="/dashboard">
            Your dashboard
          </a>
        ) : (
          <a class="button secondary" href="/login">
            Sign in or create an account
          </a>
        )}
      </p>
    </>,
  );
});
