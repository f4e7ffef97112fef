/** JSON-lines logger on stderr. Never pass secrets: fields named like secrets are masked as a backstop. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };
const SECRET_FIELD = /key|token|secret|code|password|authorization|cookie/i;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

function mask(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof Error) out[k] = { message: v.message, name: v.name };
    else out[k] = SECRET_FIELD.test(k) && typeof v === 'string' && !k.endsWith('_id') ? '[redacted]' : v;
  }
  return out;
}

export function createLogger(name: string, level: LogLevel = 'info'): Logger {
  const min = ORDER[level];
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    const line = { t: new Date().toISOString(), lvl, proc: name, msg, ...(fields ? mask(fields) : {}) };
    process.stderr.write(JSON.stringify(line) + '\n');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}
