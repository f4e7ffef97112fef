/** Static assets under /assets/: content-hashed names, so they are cached for a year and never go stale. */
import { createHash } from 'node:crypto';
import { newWebRouter } from '../web-env.js';
import { CONSOLE_JS } from './console-script.js';
import { FAVICON_SVG, STYLE_CSS } from './style.js';

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12);

export const STYLE_HREF = `/assets/style.${hash(STYLE_CSS)}.css`;

export const FAVICON_HREF = `/assets/favicon.${hash(FAVICON_SVG)}.svg`;

export const CONSOLE_JS_HREF = `/assets/console.${hash(CONSOLE_JS)}.js`;

export const assetsRoutes = newWebRouter();

assetsRoutes.get(CONSOLE_JS_HREF, (c) => {
  c.header('content-type', 'text/javascript; charset=utf-8');
  c.header('cache-control', 'public, max-age=31536000, immutable');
  return c.body(CONSOLE_JS);
});

assetsRoutes.get(STYLE_HREF, (c) => {
  c.header('content-type', 'text/css; charset=utf-8');
  c.header('cache-control', 'public, max-age=31536000, immutable');
  return c.body(STYLE_CSS);
});

assetsRoutes.get(FAVICON_HREF, (c) => {
  c.header('content-type', 'image/svg+xml');
  c.header('cache-control', 'public, max-age=31536000, immutable');
  return c.body(FAVICON_SVG);
});

/** Browsers ask for /favicon.ico on their own: send them the SVG's address. */
assetsRoutes.get('/favicon.ico', (c) => c.redirect(FAVICON_HREF, 301));
