import { parseArgs } from 'node:util';
import { createSpendingWallet, walletApi, type ActiveWalletRecord, type WalletRecord } from 'skill-market/wallet';
import { CommandFailure, readPassphrase, reportFailures, resolveConnection } from '../consumer';
import { join } from 'node:path';
import { defaultKeystorePath, readKeystorePassphrase } from '../../config';
import { DEFAULT_DEV_DIR } from '../../dev/data-dir';
import { readDevProfile } from '../../dev/profile';
import { UsageError } from '../errors';
import { terminalText } from '../terminal';

const OPTIONS = {
  label: { type: 'string' },
  keystore: { type: 'string' },
  clear: { type: 'boolean' },
  json: { type: 'boolean' },
  'api-url': { type: 'string' },
  'api-key': { type: 'string' },
  dev: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>>['values'];

const SUBCOMMANDS: Record<string, (values: Values, rest: string[]) => Promise<void>> = { new: newWallet, list, balance, label, revoke };

/**
 * `market wallet new|list|balance|label|revoke`: spending wallets whose keys stay on this
 * machine (encrypted keystores); only addresses go to the registry.
 */
export async function walletCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true });
  const [name, ...rest] = positionals;
  const run = name === undefined ? undefined : SUBCOMMANDS[name];
  if (!run)
    throw new UsageError(
      name === undefined ? 'wallet needs a subcommand: new, list, balance, label or revoke' : `unknown wallet subcommand "${name}"`,
    );
  await reportFailures(() => run(values, rest));
}

async function newWallet(values: Values, rest: string[]): Promise<void> {
  noArguments('new', rest);
  const connection = await resolveConnection(values, process.env);
  const dev = values.dev === undefined ? undefined : readDevProfile(values.dev);
  // A dev wallet holds test money only: without a passphrase given, the dev marketplace's own.
  const passphrase =
    dev && readKeystorePassphrase(process.env) === undefined ? dev.passphrase : await readPassphrase(process.env, { confirm: true });
  const created = await createSpendingWallet({
    ...connection,
    passphrase,
    keystorePath:
      values.keystore ??
      ((address) =>
        values.dev === undefined ? defaultKeystorePath(address, process.env) : join(values.dev, 'wallets', `${address}.json`)),
    ...(values.label === undefined ? {} : { label: values.label }),
  });
  if (values.json) return print(JSON.stringify({ ...created.wallet, keystorePath: created.keystorePath }));
  print(
    `Created spending wallet ${created.address}${created.wallet.label ? ` (${created.wallet.label})` : ''}; it is now your active wallet.`,
  );
  print(`Keystore: ${created.keystorePath}`);
  if (dev) {
    print(`A dev wallet (test money only; passphrase: MARKET_KEYSTORE_PASSPHRASE, else the one in ${join(values.dev!, 'profile.json')}).`);
    print(`Fund it with: market fund ${created.address} --dev${values.dev === DEFAULT_DEV_DIR ? '' : ` ${values.dev}`}`);
    return;
  }
  print('The key exists only in that file, encrypted with your passphrase: back both up. Send USDC to the address to fund it.');
}

async function list(values: Values, rest: string[]): Promise<void> {
  noArguments('list', rest);
  const wallets = await api(values).then((a) => a.list());
  if (values.json) return print(JSON.stringify(wallets));
  if (wallets.length === 0) return print('No spending wallets yet. Create one with: market wallet new');
  for (const wallet of wallets) print(describe(wallet));
}

async function balance(values: Values, rest: string[]): Promise<void> {
  noArguments('balance', rest);
  const active = await api(values).then((a) => a.active());
  if (values.json) print(JSON.stringify(active));
  if (active === null) throw new CommandFailure('no active spending wallet; create one with: market wallet new');
  if (values.json) {
    if (active.balance === null) process.exitCode = 1;
    return;
  }
  print(`${active.address}${active.label ? ` (${active.label})` : ''}: ${formatBalance(active)}`);
  if (active.balance === null) throw new CommandFailure(`the balance could not be read: ${active.balanceError ?? 'unknown reason'}`);
}

async function label(values: Values, rest: string[]): Promise<void> {
  const [address, text, ...extra] = rest;
  if (!address || extra.length > 0 || (text === undefined) === !values.clear)
    throw new UsageError('usage: market wallet label <address> <label> | market wallet label <address> --clear');
  const wallet = await api(values).then((a) => a.setLabel(address, values.clear ? null : text!));
  print(values.json ? JSON.stringify(wallet) : describe(wallet));
}

async function revoke(values: Values, rest: string[]): Promise<void> {
  const [address, ...extra] = rest;
  if (!address || extra.length > 0) throw new UsageError('usage: market wallet revoke <address>');
  const wallet = await api(values).then((a) => a.revoke(address));
  if (values.json) return print(JSON.stringify(wallet));
  print(
    `Revoked ${wallet.address} at ${wallet.revokedAt}. It is no longer your active wallet; its funds and its keystore file are untouched.`,
  );
}

async function api(values: Values) {
  return walletApi(await resolveConnection(values, process.env));
}

function describe(wallet: WalletRecord): string {
  const state = wallet.revokedAt ? `revoked ${wallet.revokedAt}` : wallet.isActive ? 'active' : 'inactive';
  return [wallet.address, state.padEnd(8), wallet.label ?? ''].join('  ').trimEnd();
}

function formatBalance(wallet: ActiveWalletRecord): string {
  return wallet.balance === null ? 'balance unavailable' : `${wallet.balance} USDC on ${wallet.network}`;
}

function noArguments(name: string, rest: string[]): void {
  if (rest.length > 0) throw new UsageError(`wallet ${name} takes no arguments, got "${rest[0]}"`);
}

/** Labels and refusals come from the registry: printed without control characters. */
const print = (line: string) => void process.stdout.write(`${terminalText(line)}\n`);
