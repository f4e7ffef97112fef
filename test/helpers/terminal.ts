/**
 * A real terminal for tests of interactive CLI behaviour (prompts, shell completion): a detached tmux session running
 * one command, keys sent as a person types them, and the screen read back.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export interface Terminal {
  /** tmux key names or literal text, e.g. `keys('svc provider pu', 'Tab')`. */
  keys(...keys: string[]): Promise<void>;
  screen(): Promise<string>;
  /** Resolves with the screen once it matches; throws with the last screen after ~10 s. */
  waitFor(pattern: RegExp | string): Promise<string>;
  close(): Promise<void>;
}

let sessions = 0;

export async function openTerminal(command: string, size = { columns: 120, rows: 40 }): Promise<Terminal> {
  const session = `svc-test-${process.pid}-${++sessions}`;
  const tmux = (...a: string[]) => exec('tmux', a);
  await tmux('new-session', '-d', '-s', session, '-x', String(size.columns), '-y', String(size.rows), command);
  const screen = async () => (await tmux('capture-pane', '-p', '-t', session)).stdout;
  return {
    async keys(...keys) {
      await tmux('send-keys', '-t', session, ...keys);
    },
    screen,
    async waitFor(pattern) {
      const matches = (s: string) => (typeof pattern === 'string' ? s.includes(pattern) : pattern.test(s));
      for (let i = 0; i < 100; i++) {
        const s = await screen();
        if (matches(s)) return s;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`screen never matched ${String(pattern)}:\n${await screen()}`);
    },
    async close() {
      await tmux('kill-session', '-t', session).catch(() => undefined);
    },
  };
}
