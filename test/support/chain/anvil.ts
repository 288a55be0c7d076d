/**
 * A fresh local chain per call: anvil on a free loopback port with our EIP-3009 USDC deployed,
 * Multicall3 and (unless left out) the x402 batch-settlement and upto contracts (with Permit2) at their canonical addresses, and freshly
 * generated, funded accounts. Every payment test, the e2e test and the benchmarks use it.
 *
 * @example
 * let chain: LocalChain;
 * beforeAll(async () => { chain = await startChain(); });
 * afterAll(() => chain.stop());
 * // a payer signs, the relayer settles:
 * const signed = await signAuthorization(chain, chain.accounts.payer, { to: chain.accounts.payee.address, value: 10_000n });
 * await chain.walletClient(chain.accounts.relayer).writeContract({
 *   address: chain.token.address, abi: usdCoinAbi, functionName: "transferWithAuthorization", args: vrsArgs(signed) });
 */
import {
  type Address,
  type Chain,
  type Hash,
  type Hex,
  type HttpTransport,
  type PrivateKeyAccount,
  type PublicClient,
  type TestClient,
  type TransactionReceipt,
  type WalletClient,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  http,
  parseEther,
  parseGwei,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { readTokenBalance } from '../../../src/chain/token/balance';
import { MULTICALL3_ADDRESS, testSmartWalletAbi, usdCoinAbi } from './abi';
import { type CompiledContracts, compileContracts } from './compile';
import { spawnAnvil } from '../../../src/chain/anvil';
import { installBatchSettlement } from '../../../src/chain/batch-settlement';
import { installUpto } from '../../../src/chain/upto';
import { USD_COIN_BYTECODE } from '../../../src/chain/token';
import { eventually } from '../eventually';

export type StartChainOptions = {
  /** EIP-155 chain id; 84532 (Base Sepolia) also suits the v1 x402 packages' `base-sepolia`. */
  chainId?: number;
  payers?: number;
  payees?: number;
  relayers?: number;
  /** USDC minted to every payer and to the smart wallet, in atomic units (6 decimals). */
  usdcPerPayer?: bigint;
  /** ETH given to every generated account, in wei. */
  ethPerAccount?: bigint;
  /** Extra anvil flags, e.g. ["--block-time", "1"]. --host/--port/--chain-id are set here. */
  anvilArgs?: string[];
  /**
   * Places x402BatchSettlement and its deposit collector at their canonical addresses (default
   * true); false makes a network without payment channels (`installBatchSettlement` adds them later).
   */
  batchSettlement?: boolean;
  /** Places Permit2 and the x402 upto proxy at their canonical addresses (default true). */
  upto?: boolean;
};

/** A viem local account that also exposes its key, for code that takes a raw private key. */
export type TestAccount = PrivateKeyAccount & { readonly privateKey: Hex };

export type LocalChain = {
  readonly rpcUrl: string;
  readonly chainId: number;
  /** CAIP-2 id as x402 v2 writes it. */
  readonly network: `eip155:${number}`;
  /** Pid of the anvil process. */
  readonly pid: number;
  readonly chain: Chain;
  readonly token: {
    readonly address: Address;
    readonly name: 'USD Coin';
    readonly symbol: 'USDC';
    readonly version: '2';
    readonly decimals: 6;
  };
  /** EIP-712 domain of the token, ready for `signTypedData`. */
  readonly domain: { name: 'USD Coin'; version: '2'; chainId: number; verifyingContract: Address };
  readonly accounts: {
    /** Token owner; `mint` sends from it. */
    readonly deployer: TestAccount;
    /** For a facilitator to settle with; `relayers[0]`. Not used by the fixture itself. */
    readonly relayer: TestAccount;
    readonly relayers: readonly TestAccount[];
    /** `payers[0]`; every payer holds `usdcPerPayer`. */
    readonly payer: TestAccount;
    readonly payers: readonly TestAccount[];
    /** `payees[0]`; payees hold no USDC. */
    readonly payee: TestAccount;
    readonly payees: readonly TestAccount[];
  };
  /** ERC-1271 wallet owned by `owner` (an EOA that signs for it), holding `usdcPerPayer`. */
  readonly smartWallet: { readonly address: Address; readonly owner: TestAccount };
  readonly publicClient: PublicClient<HttpTransport, Chain>;
  /** anvil cheat codes: time travel (`increaseTime`), `mine`, `setAutomine(false)`, snapshots. */
  readonly testClient: TestClient<'anvil', HttpTransport, Chain>;
  walletClient(account: TestAccount): WalletClient<HttpTransport, Chain, TestAccount>;
  /** A new account with `eth` (default `ethPerAccount`) and `usdc` (default 0) — for per-test data. */
  createAccount(funds?: { eth?: bigint; usdc?: bigint }): Promise<TestAccount>;
  /** Mints USDC (atomic units) from the deployer and waits for the receipt. Safe to call concurrently. */
  mint(to: Address, amount: bigint): Promise<Hash>;
  /**
   * The token balance once the transactions anvil accepted are mined: a skill server in `broadcast`
   * mode answers when its transfer is accepted, and automining follows a moment later (longer on a
   * busy machine). With automining off (a test holding transactions back) it reads at once.
   */
  balanceOf(address: Address): Promise<bigint>;
  /** Kills anvil; idempotent. Also happens automatically when the process exits. */
  stop(): Promise<void>;
};

const DEFAULTS = {
  chainId: 84532,
  payers: 2,
  payees: 2,
  relayers: 1,
  usdcPerPayer: 1_000_000_000n, // 1,000 USDC
  ethPerAccount: parseEther('1000'),
  anvilArgs: [] as string[],
  batchSettlement: true as boolean,
  upto: true as boolean,
};

// Fixed fees and gas limits: set-up transactions then need no estimate or fee RPCs.
const FEES = { maxFeePerGas: parseGwei('100'), maxPriorityFeePerGas: parseGwei('1') };

/** How long one start may take before it is abandoned and started over on a fresh anvil. */
const ATTEMPT_MS = 20_000;

export async function startChain(options: StartChainOptions = {}): Promise<LocalChain> {
  // Field by field, so an explicit `undefined` still means "the default".
  const o = Object.fromEntries(
    Object.entries(DEFAULTS).map(([key, value]) => [key, options[key as keyof StartChainOptions] ?? value]),
  ) as typeof DEFAULTS;
  const compiled = await compileContracts();
  // A start that stalls (an anvil that stops answering on a loaded machine) is abandoned with the
  // step it stalled at and tried once more on a fresh anvil, instead of hanging the test's hook.
  try {
    return await attempt(o, compiled);
  } catch (error) {
    console.error(`startChain: ${(error as Error).message}; starting a fresh anvil`);
    return attempt(o, compiled);
  }
}

async function attempt(o: typeof DEFAULTS, compiled: CompiledContracts): Promise<LocalChain> {
  const anvil = await spawnAnvil(['--chain-id', String(o.chainId), '--accounts', '0', ...o.anvilArgs]);
  const deadline = Date.now() + ATTEMPT_MS;
  const within = async <T>(what: string, work: Promise<T>): Promise<T> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`anvil set-up stalled at ${what}: not done ${ATTEMPT_MS} ms after anvil started`)),
        Math.max(0, deadline - Date.now()),
      );
    });
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    const rpcUrl = `http://127.0.0.1:${anvil.port}`;
    const chain = defineChain({
      id: o.chainId,
      name: `anvil-${o.chainId}`,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
      contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
    });
    // Short polling and no caching: receipts and block numbers must be current in tests.
    const transport = http(rpcUrl);
    const clientOptions = { chain, transport, pollingInterval: 20, cacheTime: 0 } as const;
    const publicClient = createPublicClient(clientOptions);
    const testClient = createTestClient({ ...clientOptions, mode: 'anvil' });
    const walletClient = (account: TestAccount) => createWalletClient({ ...clientOptions, account });

    const chainIdOnNode = await within('eth_chainId', publicClient.getChainId());
    if (chainIdOnNode !== o.chainId) throw new Error(`anvil reports chain id ${chainIdOnNode}, wanted ${o.chainId}`);

    const deployer = newAccount();
    const relayers = Array.from({ length: o.relayers }, newAccount);
    const payers = Array.from({ length: o.payers }, newAccount);
    const payees = Array.from({ length: o.payees }, newAccount);
    const walletOwner = newAccount();
    const everyone = [deployer, ...relayers, ...payers, ...payees, walletOwner];
    await within(
      'setting balances and code',
      Promise.all([
        ...everyone.map((a) => testClient.setBalance({ address: a.address, value: o.ethPerAccount })),
        testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: compiled.Multicall3.deployedBytecode }),
        ...(o.batchSettlement ? [installBatchSettlement(testClient)] : []),
        ...(o.upto ? [installUpto(testClient)] : []),
      ]),
    );

    // The deployer's first transactions, sent back to back with explicit nonces; anvil mines each
    // on arrival, so only the receipts are awaited (together).
    const token = getContractAddress({ from: deployer.address, nonce: 0n });
    const wallet = getContractAddress({ from: deployer.address, nonce: 1n });
    const mint = (to: Address, amount: bigint) => encodeFunctionData({ abi: usdCoinAbi, functionName: 'mint', args: [to, amount] });
    const setup: { to?: Address; data: Hex; gas: bigint }[] = [
      { data: encodeDeployData({ abi: usdCoinAbi, bytecode: USD_COIN_BYTECODE }), gas: 3_000_000n },
      {
        data: encodeDeployData({ abi: testSmartWalletAbi, bytecode: compiled.TestSmartWallet.bytecode, args: [walletOwner.address] }),
        gas: 1_000_000n,
      },
      ...[...payers.map((p) => p.address), wallet].map((to) => ({ to: token, data: mint(to, o.usdcPerPayer), gas: 100_000n })),
    ];
    const hashes: Hash[] = [];
    for (const [nonce, tx] of setup.entries()) {
      const serializedTransaction = await deployer.signTransaction({ ...tx, ...FEES, nonce, chainId: o.chainId, type: 'eip1559' });
      hashes.push(await within(`sending set-up transaction ${nonce}`, publicClient.sendRawTransaction({ serializedTransaction })));
    }
    const receipts = await receiptsOf(publicClient, hashes, Math.max(0, deadline - Date.now()));
    const failed = receipts.findIndex((r) => r.status !== 'success');
    if (failed !== -1) throw new Error(`chain set-up transaction ${failed} reverted (${hashes[failed]})`);

    const deployerClient = walletClient(deployer);
    let mintQueue: Promise<unknown> = Promise.resolve();
    const mintAndWait = (to: Address, amount: bigint): Promise<Hash> => {
      // One deployer, one nonce sequence: serialize mints instead of racing for nonces.
      const run = mintQueue.then(async () => {
        const hash = await deployerClient.writeContract({ address: token, abi: usdCoinAbi, functionName: 'mint', args: [to, amount] });
        const receipt = await publicClient.waitForTransactionReceipt({ hash });
        if (receipt.status !== 'success') throw new Error(`mint reverted (${hash})`);
        return hash;
      });
      mintQueue = run.catch(() => undefined);
      return run;
    };

    return {
      rpcUrl,
      chainId: o.chainId,
      network: `eip155:${o.chainId}`,
      pid: anvil.pid,
      chain,
      token: { address: token, name: 'USD Coin', symbol: 'USDC', version: '2', decimals: 6 },
      domain: { name: 'USD Coin', version: '2', chainId: o.chainId, verifyingContract: token },
      accounts: {
        deployer,
        relayer: first(relayers, 'relayers'),
        relayers,
        payer: first(payers, 'payers'),
        payers,
        payee: first(payees, 'payees'),
        payees,
      },
      smartWallet: { address: wallet, owner: walletOwner },
      publicClient,
      testClient,
      walletClient,
      async createAccount(funds = {}) {
        const account = newAccount();
        await testClient.setBalance({ address: account.address, value: funds.eth ?? o.ethPerAccount });
        if (funds.usdc) await mintAndWait(account.address, funds.usdc);
        return account;
      },
      mint: mintAndWait,
      balanceOf: async (address) => {
        await minedAccepted(testClient);
        return readTokenBalance(publicClient, token, address);
      },
      stop: anvil.stop,
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

function newAccount(): TestAccount {
  const privateKey = generatePrivateKey();
  return Object.assign(privateKeyToAccount(privateKey), { privateKey });
}

function first<T>(items: readonly T[], what: string): T {
  const item = items[0];
  if (item === undefined) throw new Error(`startChain: at least one of ${what} is required`);
  return item;
}

/**
 * The receipts of transactions an automining anvil mines on arrival, read until all are there: no
 * block watcher, which waits for a next block that an automining chain may never produce.
 */
async function receiptsOf(
  publicClient: PublicClient<HttpTransport, Chain>,
  hashes: readonly Hash[],
  ms: number,
): Promise<TransactionReceipt[]> {
  const found = new Map<Hash, TransactionReceipt>();
  const readMissing = async () => {
    for (const hash of hashes.filter((h) => !found.has(h))) {
      const receipt = await publicClient.getTransactionReceipt({ hash }).catch(() => undefined);
      if (receipt) found.set(hash, receipt);
    }
    return found.size;
  };
  await eventually(readMissing, (size) => size === hashes.length, 'anvil set-up stalled at the set-up receipts', ms);
  return hashes.map((hash) => found.get(hash)!);
}

/** Waits (bounded) until an automining anvil has mined every transaction it accepted. */
async function minedAccepted(testClient: TestClient<'anvil', HttpTransport, Chain>): Promise<void> {
  if (!(await testClient.getAutomine())) return;
  for (const end = Date.now() + 5_000; Date.now() < end; await Bun.sleep(10)) {
    if ((await testClient.getTxpoolStatus()).pending === 0) return;
  }
}
