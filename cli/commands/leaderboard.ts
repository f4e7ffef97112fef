/** `svc leaderboard <board>`: one merit board. */
import { api } from '../client.js';
import { str, svcCommand } from '../command.js';
import { BOARDS } from '../../core/enumerations.js';
import { usageError } from '../failure.js';
import { describe } from '../output.js';

export default svcCommand({
  meta: { name: 'leaderboard', description: `Merit boards: ${BOARDS.join(', ')}` },
  args: {
    board: { type: 'positional', description: BOARDS.join(' | ') },
    category: { type: 'string', description: 'Only this category' },
    limit: { type: 'string', description: 'At most this many entries' },
  },
  examples: ['svc leaderboard most_reliable --category weather'],
  async run({ args }) {
    const board = str(args, 'board')!;
    if (!(BOARDS as readonly string[]).includes(board)) throw usageError(`board must be one of ${BOARDS.join(', ')}`);
    const r = await api('GET', `/v1/leaderboards/${board}`, {
      query: { category: str(args, 'category'), limit: str(args, 'limit') },
    });
    return { data: r, human: () => describe(r) };
  },
});
