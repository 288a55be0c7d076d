/**
 * The dev chain's well-known accounts: anvil's default test mnemonic, funded with ETH at genesis.
 * Public knowledge, so they hold only test money on a local chain.
 */
import { toHex, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';

const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

const account = (addressIndex: number) => mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex });

/** Derived once per process: each derivation runs the mnemonic's key stretching (PBKDF2, 2,048 rounds). */
let derived: ReturnType<typeof derive> | undefined;

export function devAccounts() {
  derived ??= derive();
  return derived;
}

function derive() {
  return {
    /** Deploys the test USDC (its first transaction, so the token's address never changes) and mints. */
    deployer: account(0),
    /** The facilitator's relayer: pays gas for settlements. */
    relayer: account(1),
    /** The ready creator account: signs in as this wallet and is paid into it. */
    creator: account(2),
  };
}

/** The private key of a mnemonic account, for code that takes raw keys (the facilitator's relayers). */
export function privateKeyOf(hd: ReturnType<typeof mnemonicToAccount>): Hex {
  const key = hd.getHdKey().privateKey;
  if (!key) throw new Error('no private key for this account');
  return toHex(key);
}
