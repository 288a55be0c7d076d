#!/usr/bin/env bun
import { ConfigError } from '../config';
import { DataDirectoryLockedError } from '../db';
import { VERSION } from '../version';
import { facilitatorCommand } from './commands/facilitator';
import { healthcheckCommand } from './commands/healthcheck';
import { loginCommand } from './commands/login';
import { registryCommand } from './commands/registry';
import { serveCommand } from './commands/serve';
import { walletCommand } from './commands/wallet';
import { NotAvailableError, UsageError } from './errors';
import { USAGE } from './usage';

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  registry: registryCommand,
  serve: serveCommand,
  facilitator: facilitatorCommand,
  healthcheck: healthcheckCommand,
  login: loginCommand,
  wallet: walletCommand,
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
  const command = COMMANDS[name];
  const args = first === undefined || first.startsWith('-') ? argv : rest;
  try {
    if (!command) throw new UsageError(`unknown command "${name}"`);
    if (args.includes('--help') || args.includes('-h')) {
      process.stdout.write(USAGE);
      return 0;
    }
    await command(args);
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
  if (error instanceof ConfigError || error instanceof DataDirectoryLockedError || error instanceof NotAvailableError) {
    process.stderr.write(`market: ${error.message}\n`);
    return 1;
  }
  process.stderr.write(`market: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 1;
}

function isParseArgsError(error: unknown): boolean {
  return error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  if (code !== undefined) process.exit(code);
}
