#!/usr/bin/env bun
import { ConfigError } from '../config/env';
import { DataDirectoryLockedError } from '../db/lock';
import { DevError } from '../dev/errors';
import { VERSION } from '../version';
import { withDevDir } from './dev-flag';
import { NotAvailableError, UsageError } from './errors';
import { terminalText } from './terminal';
import { USAGE } from './usage';

type Command = (args: string[]) => Promise<void>;

/** Each command is loaded when it runs, so `market call` does not pay for the registry's imports. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  registry: async () => (await import('./commands/registry')).registryCommand,
  serve: async () => (await import('./commands/serve')).serveCommand,
  facilitator: async () => (await import('./commands/facilitator')).facilitatorCommand,
  healthcheck: async () => (await import('./commands/healthcheck')).healthcheckCommand,
  login: async () => (await import('./commands/login')).loginCommand,
  wallet: async () => (await import('./commands/wallet')).walletCommand,
  search: async () => (await import('./commands/search')).searchCommand,
  info: async () => (await import('./commands/info')).infoCommand,
  call: async () => (await import('./commands/call')).callCommand,
  channels: async () => (await import('./commands/channels')).channelsCommand,
  dev: async () => (await import('./commands/dev')).devCommand,
  mcp: async () => (await import('./commands/mcp')).mcpCommand,
  doctor: async () => (await import('./commands/doctor')).doctorCommand,
  group: async () => (await import('./commands/group')).groupCommand,
  skill: async () => (await import('./commands/skill')).skillCommand,
  fund: async () => (await import('./commands/fund')).fundCommand,
};

/** Runs the command line; returns an exit code, or undefined while a server keeps running. */
export async function main(argv: string[]): Promise<number | undefined> {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (first === '--version' || first === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const name = first === undefined || first.startsWith('-') ? 'registry' : first;
  const load = COMMANDS[name];
  const given = first === undefined || first.startsWith('-') ? argv : rest;
  const args = name === 'dev' ? given : withDevDir(given, process.env);
  try {
    if (!load) throw new UsageError(`unknown command "${name}"`);
    if (args.includes('--help') || args.includes('-h')) {
      process.stdout.write(USAGE);
      return 0;
    }
    await (await load())(args);
    return name === 'healthcheck' ? 0 : undefined;
  } catch (error) {
    return report(error);
  }
}

function report(error: unknown): number {
  if (error instanceof UsageError || isParseArgsError(error)) {
    process.stderr.write(`market: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (
    error instanceof ConfigError ||
    error instanceof DataDirectoryLockedError ||
    error instanceof NotAvailableError ||
    error instanceof DevError
  ) {
    process.stderr.write(`market: ${terminalText(error.message)}\n`);
    return 1;
  }
  process.stderr.write(`market: ${terminalText(error instanceof Error ? (error.stack ?? error.message) : String(error))}\n`);
  return 1;
}

function isParseArgsError(error: unknown): boolean {
  return error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  if (code !== undefined) process.exit(code);
}
