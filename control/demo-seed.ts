/** Seeds the demo listing on a fresh data dir so a newcomer's first search and call work (filled in by the catalog issue). */
import type { AppContext } from './context.js';

export async function seedDemo(_ctx: AppContext): Promise<void> {}
