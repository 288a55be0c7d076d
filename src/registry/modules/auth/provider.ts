import { errors as joseErrors, importSPKI, jwtVerify, type CryptoKey } from 'jose';
import { isAddress } from 'viem';
import type { AuthConfig } from '../../../config';
import { AppError } from '../../../http';

/** What a verified identity-provider access token tells us. */
export interface ProviderIdentity {
  providerUserId: string;
  /** The linked Ethereum wallet, when the token carries one. */
  wallet: string | undefined;
}

const keys = new Map<string, Promise<CryptoKey>>();

/**
 * Verifies a Privy access token the way Privy's server SDK does: ES256 only, signed by the app's
 * verification key, issuer `privy.io`, audience the app id, not expired. The user is `sub`; the
 * wallet comes from `linked_accounts` (Privy's identity-token claim: a JSON array or its string
 * form, with `{type:"wallet", address, chain_type:"ethereum"}` entries) or a `wallet` claim.
 */
export async function verifyProviderToken(auth: AuthConfig, token: string, now: Date): Promise<ProviderIdentity> {
  const provider = auth.provider;
  if (!provider) throw new AppError('UNAVAILABLE', 'Provider login is not configured on this registry');
  let key = keys.get(provider.verificationKey);
  if (!key) {
    key = importSPKI(provider.verificationKey, 'ES256');
    keys.set(provider.verificationKey, key);
  }
  try {
    const { payload } = await jwtVerify(token, await key, {
      algorithms: ['ES256'],
      issuer: 'privy.io',
      audience: provider.appId,
      currentDate: now,
      requiredClaims: ['sub', 'exp', 'iat'],
    });
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new AppError('UNAUTHORIZED', 'Invalid token');
    return { providerUserId: payload.sub, wallet: linkedWallet(payload) };
  } catch (error) {
    if (error instanceof AppError || error instanceof joseErrors.JOSEError || error instanceof TypeError) {
      throw new AppError('UNAUTHORIZED', 'Invalid token');
    }
    throw error;
  }
}

function linkedWallet(payload: Record<string, unknown>): string | undefined {
  let accounts = payload.linked_accounts;
  if (typeof accounts === 'string') {
    try {
      accounts = JSON.parse(accounts);
    } catch {
      accounts = undefined;
    }
  }
  if (Array.isArray(accounts)) {
    for (const account of accounts) {
      if (typeof account !== 'object' || account === null) continue;
      const { type, address, chain_type } = account as Record<string, unknown>;
      if (
        type === 'wallet' &&
        (chain_type === undefined || chain_type === 'ethereum') &&
        typeof address === 'string' &&
        isAddress(address, { strict: false })
      ) {
        return address;
      }
    }
  }
  const wallet = payload.wallet;
  return typeof wallet === 'string' && isAddress(wallet, { strict: false }) ? wallet : undefined;
}
