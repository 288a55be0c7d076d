/**
 * The dev profile: what every command that talks to a marketplace reads with `--dev [dir]` from a
 * dev data directory (default .market/dev), so it needs no other flag: `market call`, search and
 * info (registry, token, the demo wallet), `market serve` (facilitator, network, token, the demo
 * creator's key and payout address), `market wallet`, `market mcp`, `market fund` (the chain).
 * Written by `market dev` at each start.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DevError } from './errors';

export interface DevProfile {
  apiUrl: string;
  /** The demo consumer's key (ck_…). */
  apiKey: string;
  network: string;
  /** The local test USDC. */
  asset: string;
  keystore: string;
  passphrase: string;
  facilitatorUrl: string;
  rpcUrl: string;
  /** The demo creator's key (sk_…): it owns the example skills and signs in from the pages. */
  creatorKey: string;
  /** The demo creator's wallet: signs in as it and is paid into it. */
  creatorAddress: string;
  /**
   * The key the dev facilitator binds to the demo creator's address: `market serve --dev` keeps its
   * channels at the facilitator with it (one state for every dev skill server of the demo creator)
   * and consents with it to the refunds the facilitator signs. Absent in profiles of older versions.
   */
  receiverKey?: string;
}

/** The group `market dev` and `market serve --dev` give skills that name none (the registry wants one). */
export const FALLBACK_GROUP = 'dev';

const PROFILE_FILE = 'profile.json';
const PROFILE_KEYS = [
  'apiUrl',
  'apiKey',
  'network',
  'asset',
  'keystore',
  'passphrase',
  'facilitatorUrl',
  'rpcUrl',
  'creatorKey',
  'creatorAddress',
] as const;

/** Reads `<dir>/profile.json`; a clear message when `dir` holds no dev marketplace. */
export function readDevProfile(dir: string, cwd = process.cwd()): DevProfile {
  const path = join(resolve(cwd, dir), PROFILE_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new DevError(`no dev marketplace in ${resolve(cwd, dir)} (${PROFILE_FILE} is missing): start one with \`market dev\``);
  }
  const profile = JSON.parse(text) as Partial<DevProfile>;
  for (const key of PROFILE_KEYS) {
    if (typeof profile[key] !== 'string') throw new DevError(`${path} has no ${key}: restart \`market dev\` to rewrite it`);
  }
  return profile as DevProfile;
}

/**
 * The profile as the variables the consumer side reads (registry, key, chain, the demo wallet's
 * keystore): how `market mcp --dev` pays from the demo wallet on the dev marketplace.
 */
export function devEnvironment(dir: string, cwd = process.cwd()): Record<string, string> {
  const profile = readDevProfile(dir, cwd);
  return {
    MARKET_API_URL: profile.apiUrl,
    MARKET_API_KEY: profile.apiKey,
    MARKET_NETWORK: profile.network,
    MARKET_ASSETS: profile.asset,
    MARKET_RPC_URL: profile.rpcUrl,
    MARKET_KEYSTORE: profile.keystore,
    MARKET_KEYSTORE_PASSPHRASE: profile.passphrase,
    MARKET_MCP_DATA_DIR: join(resolve(cwd, dir), 'mcp'),
  };
}
