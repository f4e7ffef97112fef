/**
 * Opens a URL in the person's browser (the `open` package, loaded only here) when there is a terminal and
 * SVC_NO_BROWSER is unset. The URL is always printed too (for SSH sessions and CI logs), on stderr, on one line
 * with the sentence that says what to do there, so the two never end up on different streams.
 */
import { instruct, interactive } from './output.js';

export async function openInBrowser(url: string, sentence = 'Open'): Promise<boolean> {
  instruct(`${sentence}: ${url}`);
  if (!interactive() || process.env.SVC_NO_BROWSER) return false;
  try {
    const { default: open } = await import('open');
    await open(url);
    return true;
  } catch {
    return false;
  }
}
