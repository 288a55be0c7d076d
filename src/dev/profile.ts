/**
 * The dev profile: what `market call --dev <dir>` (and search, info) reads from a dev data
 * directory to reach the local registry and pay from the demo wallet, so the command the banner
 * prints works as printed. Written by `market dev` at each start.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface DevProfile {
  apiUrl: string;
  /** The demo consumer's key (ck_…). */
  apiKey: string;
  network: string;
  /** The local test USDC. */
  asset: string;
  keystore: string;
  passphrase: string;
}

const PROFILE_FILE = 'profile.json';

/** Reads `<dir>/profile.json`; a clear message when `dir` holds no dev marketplace. */
export function readDevProfile(dir: string, cwd = process.cwd()): DevProfile {
  const path = join(resolve(cwd, dir), PROFILE_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new Error(`no dev marketplace in ${resolve(cwd, dir)} (${PROFILE_FILE} is missing): start one with \`market dev\``);
  }
  const profile = JSON.parse(text) as Partial<DevProfile>;
  for (const key of ['apiUrl', 'apiKey', 'network', 'asset', 'keystore', 'passphrase'] as const) {
    if (typeof profile[key] !== 'string') throw new Error(`${path} has no ${key}: restart \`market dev\` to rewrite it`);
  }
  return profile as DevProfile;
}
