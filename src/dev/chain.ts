/**
 * The dev chain: anvil on a loopback port with its state in the data directory, our test USDC
 * deployed at a fixed address, the x402 batch-settlement contracts at their canonical addresses,
 * and the demo wallet funded, with Permit2 approved on the test USDC (so `upto` payments work at once).
 */
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
  type Address,
  type Chain,
  type LocalAccount,
  maxUint256,
  type PublicClient,
  type Transport,
} from 'viem';
import { spawnAnvil, type AnvilProcess } from '../chain/anvil';
import { installBatchSettlement } from '../chain/batch-settlement';
import { installUpto, PERMIT2_ADDRESS } from '../chain/upto';
import { deployToken, tokenAddressOf, usdCoinAbi } from '../chain/token';
import { readTokenBalance } from '../chain/token/balance';
import { devAccounts } from './accounts';

const DEV_CHAIN_ID = 31337;
export const DEV_NETWORK = `eip155:${DEV_CHAIN_ID}` as const;
/** The demo wallet is topped up to this (100 USDC) at start when it holds less than a tenth of it. */
const DEMO_FUNDING = 100_000_000n;

export interface DevChain {
  rpcUrl: string;
  anvil: AnvilProcess;
  client: PublicClient<Transport, Chain>;
  token: Address;
  balanceOf(address: Address): Promise<bigint>;
  /** Mints test USDC from the deployer and waits for it. */
  mint(to: Address, amount: bigint): Promise<void>;
}

/** The token's address on a dev chain, known before anvil starts (the deployer's first transaction). */
export const devTokenAddress = () => tokenAddressOf(devAccounts().deployer.address);

export async function startDevChain(options: { port: number; statePath: string; onExit(reason: string): void }): Promise<DevChain> {
  const anvil = await spawnAnvil(
    // --state loads the file at start and dumps at exit; --state-interval also every 5 s, so a
    // crash loses seconds, not the session.
    ['--chain-id', String(DEV_CHAIN_ID), '--state', options.statePath, '--state-interval', '5'],
    { port: options.port, onExit: options.onExit },
  );
  const rpcUrl = `http://127.0.0.1:${anvil.port}`;
  try {
    const chain = devChain(rpcUrl);
    const client = devClient(chain, rpcUrl);
    const { deployer } = devAccounts();
    const { address: token } = await deployToken(client, deployer);
    const testClient = createTestClient({ mode: 'anvil', chain, transport: http(rpcUrl) });
    await Promise.all([installBatchSettlement(testClient), installUpto(testClient)]);
    const balanceOf = (address: Address) => readTokenBalance(client, token, address);
    return {
      rpcUrl,
      anvil,
      client,
      token,
      balanceOf,
      mint: async (to, amount) => void (await mintTestUsdc(rpcUrl, token, to, amount)),
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

const devChain = (rpcUrl: string) =>
  defineChain({
    id: DEV_CHAIN_ID,
    name: 'market dev',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });

const devClient = (chain: Chain, rpcUrl: string) =>
  createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 20, cacheTime: 0 }) as PublicClient<Transport, Chain>;

/** Mints test USDC on a dev chain from the deployer (who may mint) and waits for it; the balance after. */
export async function mintTestUsdc(rpcUrl: string, token: Address, to: Address, amount: bigint): Promise<bigint> {
  const chain = devChain(rpcUrl);
  const client = devClient(chain, rpcUrl);
  const wallet = createWalletClient({ chain, transport: http(rpcUrl), account: devAccounts().deployer as LocalAccount });
  const hash = await wallet.writeContract({ address: token, abi: usdCoinAbi, functionName: 'mint', args: [to, amount] });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (receipt.status !== 'success') throw new Error(`minting test USDC reverted (${hash})`);
  return readTokenBalance(client, token, to);
}

/**
 * Tops the wallet up to DEMO_FUNDING when it runs low, and its gas, and approves Permit2 on the test
 * USDC once (the one-time approval `upto` payments need, sent from the wallet itself); its USDC
 * balance after.
 */
export async function fundDemoWallet(chain: DevChain, account: LocalAccount): Promise<bigint> {
  const address = account.address;
  await giveTestGas(chain.rpcUrl, address);
  await approvePermit2Once(chain, account);
  const balance = await chain.balanceOf(address);
  if (balance >= DEMO_FUNDING / 10n) return balance;
  await chain.mint(address, DEMO_FUNDING - balance);
  return DEMO_FUNDING;
}

/** Approves Permit2 to move the wallet's test USDC, unless it already may. */
async function approvePermit2Once(chain: DevChain, account: LocalAccount): Promise<void> {
  const allowance = await chain.client.readContract({
    address: chain.token,
    abi: usdCoinAbi,
    functionName: 'allowance',
    args: [account.address, PERMIT2_ADDRESS],
  });
  if (allowance >= maxUint256 / 2n) return;
  const wallet = createWalletClient({ chain: chain.client.chain, transport: http(chain.rpcUrl), account });
  const hash = await wallet.writeContract({
    address: chain.token,
    abi: usdCoinAbi,
    functionName: 'approve',
    args: [PERMIT2_ADDRESS, maxUint256],
  });
  const receipt = await chain.client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (receipt.status !== 'success') throw new Error(`approving Permit2 reverted (${hash})`);
}

/** Test ETH a dev wallet holds for the transactions it sends itself (a channel's timed withdrawal): 0.01 ETH. */
const TEST_GAS = 10n ** 16n;

/** Sets the wallet's ETH on a dev chain to TEST_GAS when it holds less (anvil's setBalance); whether it did. */
export async function giveTestGas(rpcUrl: string, address: Address): Promise<boolean> {
  const chain = devChain(rpcUrl);
  if ((await devClient(chain, rpcUrl).getBalance({ address })) >= TEST_GAS) return false;
  await createTestClient({ mode: 'anvil', chain, transport: http(rpcUrl) }).setBalance({ address, value: TEST_GAS });
  return true;
}
