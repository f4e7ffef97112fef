#!/usr/bin/env node
/**
 * Entry of the `svc` bin. `svc --version` answers before anything else is imported (scripts and agents call the
 * CLI in loops); every other command goes through run.ts, which loads only the command it runs.
 */
import { VERSION } from './version.js';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  process.stdout.write(`${VERSION}\n`);
} else {
  const { run } = await import('./run.js');
  process.exitCode = await run(argv);
}
