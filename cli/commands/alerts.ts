/** `svc alerts show|set`: the low-balance threshold and email alerts of the org (docs/webhooks.md). */
import { api } from '../client.js';
import { svcCommand } from '../command.js';
import { usageError } from '../failure.js';
import { dollars } from '../output.js';
import { AlertSettingsSchema, type AlertSettings } from '../../core/schemas/webhooks.schemas.js';

function human(s: AlertSettings): string {
  return [
    `low-balance alert  ${
      s.effective_balance_low_cents === null
        ? 'off until the first purchase (then 20 % of it)'
        : `below ${dollars(s.effective_balance_low_cents)}${s.balance_low_cents === null ? ' (20 % of the last purchase)' : ''}`
    }`,
    `email alerts       ${s.email_alerts ? 'on' : 'off'}`,
  ].join('\n');
}

const show = svcCommand({
  meta: { name: 'show', description: 'Show the alert settings' },
  examples: ['svc alerts show'],
  async run() {
    const r = await api('GET', '/v1/alerts', AlertSettingsSchema);
    return { data: r, human: human(r) };
  },
});

const set = svcCommand({
  meta: { name: 'set', description: 'Set the low-balance threshold or turn email alerts on/off' },
  args: {
    'balance-low': { type: 'string', description: 'Threshold in cents, or "default" (20 % of the last purchase)' },
    'email-alerts': { type: 'string', description: 'on or off' },
  },
  examples: ['svc alerts set --balance-low 500', 'svc alerts set --email-alerts off'],
  async run({ args }) {
    const body: Record<string, unknown> = {};
    const low = args['balance-low'];
    if (low !== undefined) {
      if (low === 'default') body.balance_low_cents = null;
      else if (/^\d+$/.test(low)) body.balance_low_cents = Number(low);
      else throw usageError(`--balance-low takes cents (e.g. 500) or "default", not ${low}`);
    }
    const mail = args['email-alerts'];
    if (mail !== undefined) {
      if (mail !== 'on' && mail !== 'off') throw usageError(`--email-alerts takes on or off, not ${mail}`);
      body.email_alerts = mail === 'on';
    }
    if (Object.keys(body).length === 0) throw usageError('nothing to set: pass --balance-low or --email-alerts');
    const r = await api('PATCH', '/v1/alerts', AlertSettingsSchema, { body });
    return { data: r, human: human(r) };
  },
});

export default svcCommand({
  meta: { name: 'alerts', description: 'Low-balance and cap alerts (show, set)' },
  examples: ['svc alerts show'],
  subCommands: { show: async () => show, set: async () => set },
});
