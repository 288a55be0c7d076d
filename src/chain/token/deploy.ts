import {
  encodeDeployData,
  getContractAddress,
  type Address,
  type Chain,
  type Hash,
  type LocalAccount,
  type PublicClient,
  type Transport,
} from 'viem';
import { usdCoinAbi } from './abi';
import { USD_COIN_BYTECODE } from './artifact';

/** Where `deployer`'s first transaction (nonce 0) puts the token: the same address on every fresh chain. */
export function tokenAddressOf(deployer: Address): Address {
  return getContractAddress({ from: deployer, nonce: 0n });
}

/**
 * Deploys the token from `deployer` unless it is already at `tokenAddressOf(deployer)` (a chain
 * restored from its state file); returns the address and whether it was deployed now.
 */
export async function deployToken(
  client: PublicClient<Transport, Chain | undefined>,
  deployer: LocalAccount,
): Promise<{ address: Address; deployed: boolean }> {
  const address = tokenAddressOf(deployer.address);
  const code = await client.getCode({ address });
  if (code !== undefined && code !== '0x') return { address, deployed: false };
  const nonce = await client.getTransactionCount({ address: deployer.address });
  if (nonce !== 0)
    throw new Error(
      `cannot deploy the test USDC: ${deployer.address} has already sent ${nonce} transactions but the token is not at ${address}`,
    );
  const chainId = await client.getChainId();
  const serializedTransaction = await deployer.signTransaction!({
    data: encodeDeployData({ abi: usdCoinAbi, bytecode: USD_COIN_BYTECODE }),
    gas: 3_000_000n,
    maxFeePerGas: 100_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    nonce: 0,
    chainId,
    type: 'eip1559',
  });
  const hash: Hash = await client.sendRawTransaction({ serializedTransaction });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (receipt.status !== 'success') throw new Error(`the test USDC deployment reverted (${hash})`);
  return { address, deployed: true };
}
