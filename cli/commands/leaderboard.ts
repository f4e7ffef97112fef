/** `svc leaderboard <board>`: one merit board, as a table of its entries. */
import { BOARDS } from '../../core/enumerations.js';
import { type Leaderboard, LeaderboardSchema } from '../../core/schemas/catalog.schemas.js';
import { valueFlag } from '../args.js';
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { usageError } from '../failure.js';
import { relativeTime, table } from '../output.js';

export default svcCommand({
  meta: { name: 'leaderboard', description: `Merit boards: ${BOARDS.join(', ')}` },
  args: {
    board: { type: 'positional', description: BOARDS.join(' | ') },
    category: { type: 'string', description: 'Only this category' },
    limit: valueFlag('integer', 'At most this many entries'),
  },
  examples: ['svc leaderboard most_reliable --category weather'],
  async run({ args }) {
    const board = BOARDS.find((b) => b === args.board);
    if (!board) throw usageError(`board must be one of ${BOARDS.join(', ')}`);
    const r = await api('GET', `/v1/leaderboards/${board}`, LeaderboardSchema, {
      query: { category: args.category, limit: args.limit },
    });
    return { data: r, human: () => leaderboardText(r) };
  },
});

/** A board as text: its name and freshness, then one row per entry with the listing's own facts. */
export async function leaderboardText(r: Leaderboard): Promise<string> {
  const rows = r.entries.map((e) => ({
    rank: e.rank,
    score: e.score,
    slug: e.listing.slug,
    name: e.listing.name,
    min_price_cents: e.listing.min_price_cents,
    calls_30d: e.listing.calls_30d,
  }));
  const head = `${r.board}${r.category ? ` in ${r.category}` : ''} ${r.computed_at ? `(computed ${relativeTime(r.computed_at)})` : '(not computed yet)'}`;
  return `${head}\n${await table(rows, ['rank', 'score', 'slug', 'name', 'min_price_cents', 'calls_30d'])}`;
}
