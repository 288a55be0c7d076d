import { type Env, readInteger } from './env';
import { readBoolean } from './env';
import type { RunMode } from './modes';

/** Background checks of reported payments against the chain (`MARKET_RPC_URL`). */
export interface PaymentVerificationConfig {
  /** Check in the background at all; off in tests, which drive checks themselves. */
  enabled: boolean;
  /** How often the background loop looks for reported payments to check. */
  intervalMs: number;
  /** Checks of one reference (transaction not found yet, RPC down) before it is rejected. */
  maxAttempts: number;
  /** Pause after the first inconclusive check; it doubles with each further one (at most an hour). */
  retryBaseSeconds: number;
}

export const PAYMENT_VERIFICATION_DEFAULTS = { intervalMs: 2000, maxAttempts: 8, retryBaseSeconds: 15 } as const;

export function readPaymentVerificationConfig(env: Env, mode: RunMode): PaymentVerificationConfig {
  return {
    enabled: readBoolean(env, 'MARKET_PAYMENT_VERIFICATION', mode !== 'test'),
    intervalMs: readInteger(env, 'MARKET_PAYMENT_VERIFY_INTERVAL_MS', PAYMENT_VERIFICATION_DEFAULTS.intervalMs, 50, 3_600_000),
    maxAttempts: readInteger(env, 'MARKET_PAYMENT_VERIFY_ATTEMPTS', PAYMENT_VERIFICATION_DEFAULTS.maxAttempts, 1, 100),
    retryBaseSeconds: readInteger(env, 'MARKET_PAYMENT_VERIFY_RETRY', PAYMENT_VERIFICATION_DEFAULTS.retryBaseSeconds, 1, 3600),
  };
}
