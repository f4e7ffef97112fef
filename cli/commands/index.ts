/** The root `svc` command: a lazy map, so each run imports only the command it names. */
import { type AnyCommand, lazy, svcCommand } from '../command.js';
import { VERSION } from '../version.js';

export const root: AnyCommand = svcCommand({
  meta: { name: 'svc', description: `svc ${VERSION}: the API marketplace from your terminal` },
  args: { version: { type: 'boolean', alias: 'v', description: 'Print the version' } },
  examples: ['svc register', 'svc search weather', 'svc call demo-weather current --query city=lisbon'],
  subCommands: {
    login: lazy(() => import('./login.js')),
    logout: lazy(() => import('./logout.js')),
    signup: lazy(() => import('./signup.js')),
    verify: lazy(() => import('./verify.js')),
    register: lazy(() => import('./register.js')),
    whoami: lazy(() => import('./whoami.js')),
    token: lazy(() => import('./token.js')),
    profile: lazy(() => import('./profile.js')),
    providers: lazy(() => import('./providers.js')),
    categories: lazy(() => import('./categories.js')),
    search: lazy(() => import('./search.js')),
    inspect: lazy(() => import('./inspect.js')),
    leaderboard: lazy(() => import('./leaderboard.js')),
    market: lazy(() => import('./market.js')),
    'request-api': lazy(() => import('./request-api.js')),
    provision: lazy(() => import('./provision.js')),
    call: lazy(() => import('./call.js')),
    terms: lazy(() => import('./terms.js')),
    usage: lazy(() => import('./usage.js')),
    keys: lazy(() => import('./keys/index.js')),
    budget: lazy(() => import('./budget.js')),
    balance: lazy(() => import('./balance.js')),
    billing: lazy(() => import('./billing/index.js')),
    webhooks: lazy(() => import('./webhooks/index.js')),
    alerts: lazy(() => import('./alerts.js')),
    provider: lazy(() => import('./provider/index.js')),
    publish: lazy(() => import('./provider/create.js')),
    connect: lazy(() => import('./connect.js')),
    completion: lazy(() => import('./completion.js')),
  },
  async run({ args }) {
    if (args.version) return { data: { version: VERSION }, human: VERSION };
    const { usage } = await import('../run.js');
    return { data: { version: VERSION }, human: await usage(root, ['svc']) };
  },
});
export default root;
