/**
 * Starts the control plane (and, where a test asks, other processes) over a fresh temp data dir,
 * registered for teardown with vitest's afterAll/onTestFinished by the caller via `stop()`.
 */
import { baseEnv, startProcess, tempDataDir, type RunningProcess } from './processes.js';

export interface ControlHarness {
  control: RunningProcess;
  dataDir: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startControl(extraEnv: Record<string, string> = {}): Promise<ControlHarness> {
  const data = tempDataDir();
  const env = baseEnv(data.dir, extraEnv);
  const control = await startProcess('control', 'control/main.js', env);
  return {
    control,
    dataDir: data.dir,
    env,
    async stop() {
      await control.stop();
      data.cleanup();
    },
  };
}
