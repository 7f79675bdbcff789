export { run, commandHelp, COMMANDS, EXIT } from './cli.js';
export type { Command, Context, Io } from './context.js';
