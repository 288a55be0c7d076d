/**
 * What the consumer commands (login, wallet) share: finding the registry and the key, a fetch
 * that turns "cannot connect" into a readable failure, the passphrase, and reporting failures
 * as `market: <reason>` with exit code 1 instead of a stack.
 */
import { MarketError, RegistryError } from 'skill-market/registry';
import { KeystoreError, WalletRegistrationError } from 'skill-market/wallet';
import { type Env, readKeystorePassphrase, readRegistryConnection } from '../config';
import { readDevProfile } from '../dev/profile';
import { readCredentials } from './credentials';
import { terminalText } from './terminal';

/** An expected failure: printed without a stack, exit code 1. */
export class CommandFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandFailure';
  }
}

export interface Connection {
  apiUrl: string;
  apiKey: string;
}

/**
 * The registry and a key, as `readRegistryConnection` finds them; without a key the command cannot
 * run. With --dev [dir]: the dev marketplace's registry and its demo consumer's key (flags still win).
 */
export async function resolveConnection(
  flags: { 'api-url'?: string | undefined; 'api-key'?: string | undefined; dev?: string | undefined },
  env: Env,
): Promise<Connection> {
  if (flags.dev !== undefined) {
    const profile = readDevProfile(flags.dev);
    return { apiUrl: flags['api-url'] ?? profile.apiUrl, apiKey: flags['api-key'] ?? profile.apiKey };
  }
  const { apiUrl, apiKey } = readRegistryConnection(env, flags, await readCredentials(env));
  if (!apiKey) throw new CommandFailure('not logged in: run `market login --api-key <key>` or set MARKET_API_KEY');
  return { apiUrl, apiKey };
}

/** MARKET_KEYSTORE_PASSPHRASE, else a hidden prompt on the terminal (asked twice with `confirm`). */
export async function readPassphrase(env: Env, options: { confirm: boolean }): Promise<string> {
  const fromEnv = readKeystorePassphrase(env);
  if (fromEnv !== undefined) return fromEnv;
  if (!process.stdin.isTTY) throw new CommandFailure('no passphrase: set MARKET_KEYSTORE_PASSPHRASE or run in a terminal to be asked');
  const passphrase = await promptHidden('Keystore passphrase: ');
  if (options.confirm && (await promptHidden('Repeat the passphrase: ')) !== passphrase)
    throw new CommandFailure('the passphrases do not match');
  return passphrase;
}

function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (outcome: () => void) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      outcome();
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish(() => resolve(value));
        if (ch === '\u0003') return finish(() => reject(new CommandFailure('cancelled')));
        value = ch === '\u007f' || ch === '\b' ? value.slice(0, -1) : value + ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** Runs a consumer command; expected failures print `market: <reason>` and set exit code 1. */
export async function reportFailures(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    const expected =
      error instanceof CommandFailure ||
      error instanceof MarketError ||
      error instanceof KeystoreError ||
      error instanceof WalletRegistrationError;
    const fileError = typeof (error as NodeJS.ErrnoException)?.code === 'string' && (error as NodeJS.ErrnoException).syscall !== undefined;
    if (!expected && !fileError) throw error;
    process.stderr.write(`market: ${terminalText(describeFailure(error as Error))}\n`);
    process.exitCode = 1;
  }
}

/** A registry's refusal in its own words with the status (`Wallet not found (HTTP 404)`); anything else by its message. */
export function describeFailure(error: Error): string {
  return error instanceof RegistryError && error.error !== undefined && (error.status ?? 0) > 0
    ? `${error.error} (HTTP ${error.status})`
    : error.message;
}
