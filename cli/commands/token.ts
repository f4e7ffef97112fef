/**
 * `svc token`: prints the stored API key and nothing else, for scripts (as `gh auth token` does):
 * `export SVC_API_KEY="$(svc token)"`. SVC_API_KEY in the environment wins over the stored key, as everywhere.
 */
import { config } from '../client.js';
import { svcCommand } from '../command.js';
import { CliFailure } from '../failure.js';

export default svcCommand({
  meta: { name: 'token', description: 'Print the stored API key (for scripts: export SVC_API_KEY="$(svc token)")' },
  args: {},
  examples: ['svc token', 'export SVC_API_KEY="$(svc token)"'],
  async run() {
    const cfg = config();
    if (!cfg.apiKey)
      throw new CliFailure(
        'api',
        'no_key_stored',
        `no API key is stored in ${cfg.file}; register or sign in first`,
        null,
        'svc register',
      );
    return { data: { api_key: cfg.apiKey, file: cfg.file }, human: cfg.apiKey };
  },
});
