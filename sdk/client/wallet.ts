/**
 * The paying wallet: a 0x private key, or anything that signs EIP-712 typed data locally (a viem
 * LocalAccount, e.g. one loaded from a keystore with `loadSpendingWallet`). The key stays in this
 * process; errors never echo it.
 */
import { getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { TypedDataSigner } from '../x402/index';
import type { WalletInput } from './types';

const PRIVATE_KEY = /^(0x)?[0-9a-fA-F]{64}$/;

/**
 * The signer for `wallet`.
 *
 * @example toSigner(process.env.MARKET_PRIVATE_KEY!) // a viem account
 * @throws TypeError (without the key in the message) when `wallet` is neither form
 */
export function toSigner(wallet: WalletInput): TypedDataSigner {
  if (typeof wallet === 'string') {
    const key = wallet.trim();
    if (!PRIVATE_KEY.test(key)) throw new TypeError('SkillMarket: wallet must be a 0x-prefixed 32-byte hex private key or a viem account');
    return privateKeyToAccount((key.startsWith('0x') ? key : `0x${key}`) as `0x${string}`);
  }
  if (
    typeof wallet !== 'object' ||
    wallet === null ||
    typeof wallet.signTypedData !== 'function' ||
    typeof wallet.address !== 'string' ||
    !/^0x[0-9a-fA-F]{40}$/.test(wallet.address)
  ) {
    throw new TypeError('SkillMarket: wallet must be a private key or an account with an address and signTypedData()');
  }
  const account = wallet as TypedDataSigner;
  // Bound, so an account whose methods read `this` keeps working.
  return { address: getAddress(account.address.toLowerCase()), signTypedData: (data) => account.signTypedData(data) };
}
