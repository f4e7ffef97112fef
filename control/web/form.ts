/** Reading urlencoded or multipart form fields in page handlers (the body is parsed once and cached by Hono). */
import type { Context } from 'hono';
import type { WebEnv } from './web-env.js';

/** A text field's value, or undefined when absent or a file. */
export async function formString(c: Context<WebEnv>, name: string): Promise<string | undefined> {
  const v = (await c.req.parseBody())[name];
  return typeof v === 'string' ? v : undefined;
}
