/**
 * The paying account of `market mcp`: a keystore opened with its passphrase, or (unsafe, only when
 * the owner sets MARKET_MCP_PRIVATE_KEY) a raw key. The key stays in this process: only EIP-3009
 * signatures leave it.
 */
import type { LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { loadSpendingWallet, looksLikePrivateKey } from 'skill-market/wallet';
import { ConfigError } from '../config/env';
import type { WalletSource } from './config';

export async function openWallet(source: WalletSource, warn: (line: string) => void): Promise<LocalAccount | undefined> {
  switch (source.type) {
    case 'none':
      return undefined;
    case 'raw-key': {
      const key = source.key.startsWith('0x') ? source.key : `0x${source.key}`;
      if (!looksLikePrivateKey(key)) throw new ConfigError('MARKET_MCP_PRIVATE_KEY', 'must be a 32-byte hex private key');
      warn('market mcp: paying with the raw key in MARKET_MCP_PRIVATE_KEY (unsafe: prefer a keystore, MARKET_KEYSTORE)');
      return privateKeyToAccount(key as `0x${string}`);
    }
    case 'keystore':
      try {
        return await loadSpendingWallet({ keystorePath: source.path, passphrase: source.passphrase });
      } catch (error) {
        throw new ConfigError('MARKET_KEYSTORE', `${source.path} could not be opened: ${(error as Error).message}`);
      }
  }
}
