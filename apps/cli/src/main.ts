#!/usr/bin/env node
import { run } from './cli.js';

// The process: real streams and environment in, an exit code out. Everything else is in cli.ts.
const code = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  now: () => Date.now(),
});
process.exitCode = code;
