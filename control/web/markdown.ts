/**
 * Provider markdown (terms, descriptions) to HTML with markdown-it: raw HTML off (tags come out as text),
 * links limited to http(s)/mailto and marked rel="nofollow noopener ugc", no images (a page must not load
 * third-party content). The result is the only raw HTML a page inserts besides our own charts.
 */
import MarkdownIt from 'markdown-it';
import { raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
md.disable(['image']);
md.validateLink = (url: string) => /^(https?:|mailto:)/i.test(url.trim());
const defaultLinkOpen =
  md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet('rel', 'nofollow noopener ugc');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

// Provider headings sit under the page's own h1/h2: shift them down two levels (h1 -> h3, capped at h6).
md.renderer.rules.heading_open = (tokens, idx, options, _env, self) => {
  const t = tokens[idx]!;
  t.tag = `h${Math.min(6, Number(t.tag.slice(1)) + 2)}`;
  return self.renderToken(tokens, idx, options);
};
md.renderer.rules.heading_close = (tokens, idx, options, _env, self) => {
  const t = tokens[idx]!;
  t.tag = `h${Math.min(6, Number(t.tag.slice(1)) + 2)}`;
  return self.renderToken(tokens, idx, options);
};

export function renderMarkdown(source: string): HtmlEscapedString {
  return raw(`<div class="prose">${md.render(source)}</div>`);
}
