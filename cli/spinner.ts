/** A spinner on steps that wait (checkout polling, verify, import): @clack/prompts on a TTY, nothing otherwise. */
import { interactive, useColor } from './output.js';

export async function withSpinner<T>(label: string, work: () => Promise<T>): Promise<T> {
  if (!interactive() || !useColor(process.stderr)) return work();
  const { spinner } = await import('@clack/prompts');
  const s = spinner({ output: process.stderr });
  s.start(label);
  try {
    const r = await work();
    s.stop(label);
    return r;
  } catch (e) {
    s.error(`${label}: failed`);
    throw e;
  }
}
