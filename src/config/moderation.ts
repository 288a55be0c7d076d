import { getAddress } from 'viem';
import { ADDRESS_PATTERN } from 'skill-market/x402';
import { ConfigError, type Env, read, readInteger } from './env';

/** Who moderates the marketplace and how often an account may report. */
export interface ModerationConfig {
  /**
   * The operators' wallet addresses (OPERATOR_ADDRESSES, comma-separated; EIP-55 checksummed here):
   * an account signed in with one of them sees the Operator section and may hide skills and
   * suspend creators. Empty: nobody moderates.
   */
  operators: string[];
  /** Reports one account may file per hour (MARKET_REPORTS_PER_HOUR, default 10). */
  reportsPerHour: number;
}

export function readModerationConfig(env: Env): ModerationConfig {
  const raw = read(env, 'OPERATOR_ADDRESSES') ?? '';
  const operators = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((address) => {
      if (!ADDRESS_PATTERN.test(address)) throw new ConfigError('OPERATOR_ADDRESSES', `must list 0x wallet addresses, got "${address}"`);
      return getAddress(address.toLowerCase());
    });
  return {
    operators: [...new Set(operators)],
    reportsPerHour: readInteger(env, 'MARKET_REPORTS_PER_HOUR', 10, 1, 10_000),
  };
}
