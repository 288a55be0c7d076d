/**
 * What the calling commands (search, info, call) share: their flags, the SkillMarket client
 * built from flags, environment and the stored login, and how a client error is reported
 * (`market: <reason>`, exit code 1, the receipt when money moved).
 */
import { join } from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import type { LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { loadSpendingWallet, MarketError, PaidCallError, SkillMarket, type AllowedAsset, type SkillMarketOptions } from 'skill-market';
import {
  checkRegistryUrl,
  type Env,
  readClientChain,
  readConfigDir,
  readDiscovery,
  readRegistryConnection,
  readWalletKey,
} from '../config';
import { readDevProfile, type DevProfile } from '../dev/profile';
import { CommandFailure, readPassphrase, reportFailures } from './consumer';
import { readCredentials } from './credentials';
import { UsageError } from './errors';
import { terminalJson } from './terminal';

/** Flags every calling command takes. */
export const CLIENT_FLAGS = {
  'api-url': { type: 'string' },
  'api-key': { type: 'string' },
  network: { type: 'string' },
  asset: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  dev: { type: 'string' },
  discovery: { type: 'string', multiple: true },
} as const satisfies ParseArgsConfig['options'];

/** Flags of commands that pay. */
export const WALLET_FLAGS = {
  'wallet-key': { type: 'string' },
  keystore: { type: 'string' },
  payment: { type: 'string' },
  'max-deposit': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/**
 * How calls pay and where payment channels are kept: --payment auto|exact|channel|upto
 * (MARKET_PAYMENT), --max-deposit (MARKET_MAX_DEPOSIT), and `channels.json` in `dir` (the config
 * folder, or the `market dev` folder).
 */
function paymentOptions(values: ClientValues, env: Env): Partial<SkillMarketOptions> {
  const payment = values.payment ?? env.MARKET_PAYMENT;
  const maxDeposit = values['max-deposit'] ?? env.MARKET_MAX_DEPOSIT;
  if (payment !== undefined && payment !== 'auto' && payment !== 'exact' && payment !== 'channel' && payment !== 'upto')
    throw new UsageError('--payment (MARKET_PAYMENT) must be auto, exact, channel or upto');
  return {
    channels: channelFile(values, env),
    ...(payment === undefined ? {} : { payment }),
    ...(maxDeposit === undefined ? {} : { maxDeposit }),
  };
}

export interface ClientValues {
  'api-url'?: string | undefined;
  'api-key'?: string | undefined;
  network?: string | undefined;
  asset?: string[] | undefined;
  'wallet-key'?: string | undefined;
  keystore?: string | undefined;
  payment?: string | undefined;
  'max-deposit'?: string | undefined;
  /** A `market dev` data directory: its registry, network, token and demo wallet (flags still win). */
  dev?: string | undefined;
  /** Other catalogues (Bazaar discovery base URLs) searched beside the registry. */
  discovery?: string[] | undefined;
}

/**
 * The client for a command: registry and key as `readRegistryConnection` finds them (flags,
 * MARKET_* then SKILLZ_* variables, the stored login), network and extra tokens as
 * `readClientChain` (--network, MARKET_NETWORK; --asset, MARKET_ASSETS). With `pays`, the wallet:
 * --wallet-key, MARKET_PRIVATE_KEY, SKILLZ_PRIVATE_KEY, or --keystore PATH opened with
 * MARKET_KEYSTORE_PASSPHRASE (else a prompt on a terminal), and MARKET_RPC_URL (when set, a call
 * whose payment outcome the server cannot tell is checked on chain).
 */
export async function clientFrom(
  values: ClientValues,
  env: Env,
  pays: boolean,
  extra: Partial<SkillMarketOptions> = {},
): Promise<SkillMarket> {
  if (values.dev !== undefined) return devClient(values, readProfile(values.dev), pays, extra);
  const { apiUrl, apiKey } = readRegistryConnection(env, values, await readCredentials(env));
  const { network, assets, rpcUrl } = readClientChain(env, values);
  const options: SkillMarketOptions = { apiUrl, assets, ...paymentOptions(values, env), ...extra };
  const discovery = readDiscovery(env, values);
  if (discovery.length > 0) options.discovery = discovery;
  if (apiKey) options.apiKey = apiKey;
  if (network) options.network = network;
  if (pays) {
    const wallet = await walletFrom(values, env);
    if (wallet) options.wallet = wallet;
    if (rpcUrl) options.rpcUrl = rpcUrl;
  }
  return new SkillMarket(options);
}

/** The paying account of a command that sends its own transactions (a channel withdrawal): the same wallet `call` pays from. */
export async function payingAccount(values: ClientValues, env: Env): Promise<LocalAccount> {
  const wallet =
    values.dev !== undefined && values['wallet-key'] === undefined && values.keystore === undefined
      ? await loadSpendingWallet({ keystorePath: readProfile(values.dev).keystore, passphrase: readProfile(values.dev).passphrase })
      : await walletFrom(values, env);
  if (wallet === undefined) throw new CommandFailure('no wallet: set MARKET_PRIVATE_KEY, --wallet-key or --keystore');
  if (typeof wallet === 'string') return privateKeyToAccount((wallet.startsWith('0x') ? wallet : `0x${wallet}`) as `0x${string}`);
  if (!('signTransaction' in wallet)) throw new CommandFailure('this wallet cannot send transactions');
  return wallet as LocalAccount;
}

/** Where `market call` keeps payment channels: `channels.json` in the config folder, or in the `market dev` folder. */
export function channelFile(values: ClientValues, env: Env): string {
  return join(values.dev ?? readConfigDir(env), 'channels.json');
}

function readProfile(dir: string): DevProfile {
  try {
    return readDevProfile(dir);
  } catch (error) {
    throw new CommandFailure((error as Error).message);
  }
}

/** With --dev <dir>: the dev marketplace's registry and token, paid from its demo wallet unless a wallet flag says otherwise. */
async function devClient(
  values: ClientValues,
  profile: DevProfile,
  pays: boolean,
  extra: Partial<SkillMarketOptions>,
): Promise<SkillMarket> {
  const network = values.network ?? profile.network;
  const assets: AllowedAsset[] = [...(values.asset ?? []), profile.asset].map((address) => ({ network, address }));
  const options: SkillMarketOptions = {
    apiUrl: values['api-url'] === undefined ? profile.apiUrl : checkRegistryUrl(values['api-url'], '--api-url'),
    apiKey: values['api-key'] ?? profile.apiKey,
    network,
    assets,
    ...paymentOptions(values, {}),
    ...(values.discovery ? { discovery: readDiscovery({}, values) } : {}),
    ...extra,
  };
  if (pays) {
    options.wallet =
      values['wallet-key'] !== undefined || values.keystore !== undefined
        ? await walletFrom(values, { MARKET_KEYSTORE_PASSPHRASE: profile.passphrase })
        : await loadSpendingWallet({ keystorePath: profile.keystore, passphrase: profile.passphrase });
  }
  return new SkillMarket(options);
}

async function walletFrom(values: ClientValues, env: Env): Promise<SkillMarketOptions['wallet']> {
  if (values['wallet-key'] !== undefined && values.keystore !== undefined)
    throw new UsageError('give either --wallet-key or --keystore, not both');
  if (values.keystore !== undefined) {
    return loadSpendingWallet({ keystorePath: values.keystore, passphrase: await readPassphrase(env, { confirm: false }) });
  }
  return values['wallet-key'] ?? readWalletKey(env);
}

/**
 * Runs a calling command: client errors (refusals, registry and skill failures, bad options)
 * become `market: <reason>` with exit code 1; when money moved or may have, that is said and the
 * receipt follows on stderr.
 */
export function reportClientFailures(run: () => Promise<void>): Promise<void> {
  return reportFailures(async () => {
    try {
      await run();
    } catch (error) {
      if (error instanceof MarketError) {
        const charged = error.charged === 'no' ? '' : ` (charged: ${error.charged})`;
        if (error instanceof PaidCallError && error.receipt) process.stderr.write(`${terminalJson({ receipt: error.receipt }, true)}\n`);
        throw new CommandFailure(`${error.message}${charged}`);
      }
      if (error instanceof TypeError && error.message.startsWith('SkillMarket:'))
        throw new CommandFailure(error.message.slice('SkillMarket: '.length));
      if (error instanceof TypeError && error.message.startsWith('call:')) throw new CommandFailure(error.message.slice('call: '.length));
      throw error;
    }
  });
}

/** Writes `value` as JSON on stdout: indented for people, one line with --json; nothing in it acts on a terminal. */
export function printJson(value: unknown, compact: boolean | undefined): void {
  process.stdout.write(`${terminalJson(value, compact === true)}\n`);
}
