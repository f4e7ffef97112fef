/** `svc leaderboard <board>`: one merit board, as a table of its entries. */
import { BOARDS } from '../../core/enumerations.js';
import { LeaderboardSchema } from '../../core/schemas/catalog.schemas.js';
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
    const rows = r.entries.map((e) => ({
      rank: e.rank,
      score: e.score,
      slug: e.listing.slug,
      name: e.listing.name,
      category: e.listing.category,
      min_price_cents: e.listing.min_price_cents,
      calls_30d: e.listing.calls_30d,
      provider: e.listing.provider?.display_name ?? null,
    }));
    const head = `${r.board}${r.category ? ` in ${r.category}` : ''} (computed ${relativeTime(r.computed_at)})`;
    return { data: r, human: async () => `${head}\n${await table(rows, Object.keys(rows[0] ?? { rank: 0 }))}` };
  },
});
