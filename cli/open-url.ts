/**
 * Opens a URL in the person's browser (the `open` package, loaded only here) when there is a terminal and
 * SVC_NO_BROWSER is unset; the URL is always printed too, for SSH sessions and CI logs.
 */
import { instruct, interactive } from './output.js';

export async function openInBrowser(url: string): Promise<boolean> {
  instruct(`Open: ${url}`);
  if (!interactive() || process.env.SVC_NO_BROWSER) return false;
  try {
    const { default: open } = await import('open');
    await open(url);
    return true;
  } catch {
    return false;
  }
}
