/**
 * The only environment reads of the creator SDK, in the order the marketplace documents:
 * wallet, API key and registry URL (ours first, then the SKILLZ_* names existing users have),
 * and NODE_ENV for the production error text. Everything else comes in through options.
 */
import { privateKeyToAccount } from 'viem/accounts';
import type { Address } from '../x402/index';
import { ServeConfigError } from './errors';
import { ADDRESS_PATTERN, BYTES32_PATTERN, checksumAddress } from '../x402/patterns';

/** Environment variables as a plain record (`process.env` by default). */
export type Env = Record<string, string | undefined>;

/** Where the payout address came from, for the start-up line (never the key itself). */
export interface ResolvedWallet {
  address: Address;
  source: string;
}

/** The process environment where there is one (Node, Bun), else an empty record. */
export function processEnv(): Env {
  return (globalThis as { process?: { env?: Env } }).process?.env ?? {};
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/**
 * The payout address: the `wallet` option, then MARKET_WALLET_ADDRESS, then MARKET_WALLET_KEY
 * (address derived), then SKILLZ_WALLET_ADDRESS, then SKILLZ_WALLET_KEY. A value is a 42-character
 * address or a 66-character private key; anything else is an error naming its source.
 *
 * @throws ServeConfigError `wallet not found` when no source has a value
 */
export function resolveWallet(option: string | undefined, env: Env): ResolvedWallet {
  const sources: [string, string | undefined][] = [
    ['the wallet option', option],
    ['MARKET_WALLET_ADDRESS', env.MARKET_WALLET_ADDRESS],
    ['MARKET_WALLET_KEY', env.MARKET_WALLET_KEY],
    ['SKILLZ_WALLET_ADDRESS', env.SKILLZ_WALLET_ADDRESS],
    ['SKILLZ_WALLET_KEY', env.SKILLZ_WALLET_KEY],
  ];
  for (const [source, raw] of sources) {
    const value = nonEmpty(raw);
    if (value !== undefined) return { address: walletAddress(value, source), source };
  }
  throw new ServeConfigError(
    'wallet not found: pass serve(skills, { wallet }) or set MARKET_WALLET_ADDRESS (or MARKET_WALLET_KEY) to the address that receives payments',
  );
}

/** A 42-character address (checksum checked when mixed-case) or a 66-character private key → address. */
export function walletAddress(value: string, source = 'wallet'): Address {
  if (ADDRESS_PATTERN.test(value)) {
    const address = checksumAddress(value);
    if (!address) throw new ServeConfigError(`${source} has an invalid EIP-55 checksum`);
    return address;
  }
  if (BYTES32_PATTERN.test(value)) {
    try {
      return privateKeyToAccount(value as `0x${string}`).address;
    } catch {
      throw new ServeConfigError(`${source} is not a valid secp256k1 private key`);
    }
  }
  throw new ServeConfigError(
    `${source} must be a 42-character 0x address or a 66-character 0x private key (got ${value.length} characters)`,
  );
}

/** The API key: the option, then MARKET_API_KEY, then SKILLZ_API_KEY; undefined when none is set. */
export function resolveApiKey(option: string | undefined, env: Env): string | undefined {
  return nonEmpty(option) ?? nonEmpty(env.MARKET_API_KEY) ?? nonEmpty(env.SKILLZ_API_KEY);
}

/** The registry URL: the option, then MARKET_API_URL, then SKILLZ_API_URL, then `fallback`. */
export function resolveApiUrl(option: string | undefined, env: Env, fallback: string): string {
  return httpUrl(nonEmpty(option) ?? nonEmpty(env.MARKET_API_URL) ?? nonEmpty(env.SKILLZ_API_URL) ?? fallback, 'apiUrl');
}

/** True when NODE_ENV is `production` (handler error messages are then hidden). */
export function isProduction(env: Env): boolean {
  return env.NODE_ENV?.trim() === 'production';
}

/** An absolute http(s) URL without a trailing slash. */
export function httpUrl(value: unknown, name: string): string {
  if (typeof value !== 'string' || !URL.canParse(value)) throw new ServeConfigError(`${name} must be an absolute http(s) URL`);
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ServeConfigError(`${name} must be an absolute http(s) URL`);
  if (url.username || url.password) throw new ServeConfigError(`${name} must not contain credentials`);
  return value.replace(/\/+$/, '');
}
