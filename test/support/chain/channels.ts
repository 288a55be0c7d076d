/**
 * Payment channels of x402BatchSettlement on the local chain, driven directly with viem (no x402
 * package in between): configs, ERC-3009 deposits through the collector, signed vouchers, claim
 * batches and refunds, transactions that must succeed and calls that must revert with a given error.
 *
 * @example
 * const config = channelConfig(chain);
 * await depositToChannel(chain, chain.accounts.payer, config, 10_000n);
 * const row = claimRow(config, 4_000n, await signVoucher(chain, chain.accounts.payer, config, 4_000n), 4_000n);
 * await settlementTx(chain, receiver, 'claim', [[row]]);
 */
import {
  type Address,
  BaseError,
  type ContractFunctionArgs,
  type ContractFunctionName,
  ContractFunctionRevertedError,
  type Hex,
  type LocalAccount,
  type TransactionReceipt,
  parseEventLogs,
  zeroAddress,
} from 'viem';
import {
  BATCH_SETTLEMENT_ADDRESS,
  type ChannelConfig,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  MIN_WITHDRAW_DELAY,
  batchSettlementAbi,
  batchSettlementDomain,
  channelIdOf,
  claimBatchTypes,
  erc3009CollectorData,
  erc3009DepositNonce,
  receiveWithAuthorizationTypes,
  refundTypes,
  voucherTypes,
} from '../../../src/chain/batch-settlement';
import type { LocalChain, TestAccount } from './anvil';
import { randomNonce } from './authorization';

type WriteName = ContractFunctionName<typeof batchSettlementAbi, 'nonpayable'>;
type WriteArgs<F extends WriteName> = ContractFunctionArgs<typeof batchSettlementAbi, 'nonpayable', F>;
const settlement = { address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi } as const;

/** A config for `payers[0]` → `payees[0]` in the test USDC with a fresh salt; override any field. */
export function channelConfig(chain: LocalChain, overrides: Partial<ChannelConfig> = {}): ChannelConfig {
  return {
    payer: chain.accounts.payer.address,
    payerAuthorizer: zeroAddress,
    receiver: chain.accounts.payee.address,
    receiverAuthorizer: chain.accounts.payees[1]?.address ?? chain.accounts.payee.address,
    token: chain.token.address,
    withdrawDelay: MIN_WITHDRAW_DELAY,
    salt: randomNonce(),
    ...overrides,
  };
}

export type OpenChannel = {
  payer: TestAccount;
  receiver: TestAccount;
  authorizer: TestAccount;
  config: ChannelConfig;
  channelId: Hex;
};

/**
 * A channel from a fresh payer holding 1 USDC to `receiver` with receiver authorizer `authorizer`
 * (fresh accounts with ETH unless given; pass the same ones for channels of one seller), funded
 * with `deposit` (default 10,000; 0 deposits nothing). Other fields override the config.
 */
export async function openChannel(
  chain: LocalChain,
  {
    deposit = 10_000n,
    receiver,
    authorizer,
    ...overrides
  }: Partial<Omit<ChannelConfig, 'receiver'>> & { deposit?: bigint; receiver?: TestAccount; authorizer?: TestAccount } = {},
): Promise<OpenChannel> {
  const [payer, receiverAccount, authorizerAccount] = await Promise.all([
    chain.createAccount({ usdc: 1_000_000n }),
    receiver ?? chain.createAccount(),
    authorizer ?? chain.createAccount(),
  ]);
  const config = channelConfig(chain, {
    payer: payer.address,
    receiver: receiverAccount.address,
    receiverAuthorizer: authorizerAccount.address,
    ...overrides,
  });
  if (deposit > 0n) await depositToChannel(chain, payer, config, deposit);
  return { payer, receiver: receiverAccount, authorizer: authorizerAccount, config, channelId: channelIdOf(config, chain.chainId) };
}

/** The chain's clock (anvil's, which time travel moves away from the wall clock). */
export async function chainTime(chain: LocalChain): Promise<bigint> {
  return (await chain.publicClient.getBlock()).timestamp;
}

/**
 * `signer`'s (the payer itself, or the owner of a smart-wallet payer) EIP-3009
 * ReceiveWithAuthorization of `amount` to the collector for the channel of `config`, valid for an
 * hour of chain time, bound to this channel by its nonce (of `salt`).
 */
export async function signDepositAuthorization(chain: LocalChain, signer: LocalAccount, config: ChannelConfig, amount: bigint) {
  const salt = BigInt(randomNonce());
  const validBefore = (await chainTime(chain)) + 3_600n;
  const signature = await signer.signTypedData({
    domain: chain.domain,
    types: receiveWithAuthorizationTypes,
    primaryType: 'ReceiveWithAuthorization',
    message: {
      from: config.payer,
      to: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
      value: amount,
      validAfter: 0n,
      validBefore,
      nonce: erc3009DepositNonce(channelIdOf(config, chain.chainId), salt),
    },
  });
  return { salt, validBefore, signature };
}

/** The arguments of `deposit` for `amount` into the channel of `config`, authorized by `signer` (see signDepositAuthorization). */
export async function signDeposit(chain: LocalChain, signer: LocalAccount, config: ChannelConfig, amount: bigint) {
  const { salt, validBefore, signature } = await signDepositAuthorization(chain, signer, config, amount);
  return [config, amount, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, erc3009CollectorData(0n, validBefore, salt, signature)] as const;
}

/** Deposits `amount` (see signDeposit), sent by `relayer` (default the fixture's); returns the receipt. */
export async function depositToChannel(
  chain: LocalChain,
  signer: LocalAccount,
  config: ChannelConfig,
  amount: bigint,
  relayer: TestAccount = chain.accounts.relayer,
): Promise<TransactionReceipt> {
  return settlementTx(chain, relayer, 'deposit', await signDeposit(chain, signer, config, amount));
}

/** A voucher for `maxClaimableAmount` on the channel of `config`, signed by `signer`. */
export function signVoucher(chain: LocalChain, signer: LocalAccount, config: ChannelConfig, maxClaimableAmount: bigint): Promise<Hex> {
  const channelId = channelIdOf(config, chain.chainId);
  return signer.signTypedData({
    domain: batchSettlementDomain(chain.chainId),
    types: voucherTypes,
    primaryType: 'Voucher',
    message: { channelId, maxClaimableAmount },
  });
}

/** A refund authorization of the receiver authorizer (`signer`) for `nonce` and `amount`. */
export function signRefund(chain: LocalChain, signer: LocalAccount, config: ChannelConfig, nonce: bigint, amount: bigint): Promise<Hex> {
  return signer.signTypedData({
    domain: batchSettlementDomain(chain.chainId),
    types: refundTypes,
    primaryType: 'Refund',
    message: { channelId: channelIdOf(config, chain.chainId), nonce, amount },
  });
}

export type ClaimRow = {
  voucher: { channel: ChannelConfig; maxClaimableAmount: bigint };
  signature: Hex;
  totalClaimed: bigint;
};

/** One row of `claim` / `claimWithSignature`. */
export function claimRow(config: ChannelConfig, maxClaimableAmount: bigint, signature: Hex, totalClaimed: bigint): ClaimRow {
  return { voucher: { channel: config, maxClaimableAmount }, signature, totalClaimed };
}

/** The receiver authorizer's `ClaimBatch` signature over `rows`. */
export function signClaimBatch(chain: LocalChain, signer: LocalAccount, rows: readonly ClaimRow[]): Promise<Hex> {
  return signer.signTypedData({
    domain: batchSettlementDomain(chain.chainId),
    types: claimBatchTypes,
    primaryType: 'ClaimBatch',
    message: {
      claims: rows.map((row) => ({
        channelId: channelIdOf(row.voucher.channel, chain.chainId),
        maxClaimableAmount: row.voucher.maxClaimableAmount,
        totalClaimed: row.totalClaimed,
      })),
    },
  });
}

/** Sends a settlement-contract transaction from `account` and returns its receipt; throws unless it succeeded. */
export async function settlementTx<F extends WriteName>(
  chain: LocalChain,
  account: TestAccount,
  functionName: F,
  args: WriteArgs<F>,
): Promise<TransactionReceipt> {
  const write = chain.walletClient(account).writeContract as (request: object) => Promise<Hex>;
  const hash = await write({ ...settlement, functionName, args, gas: 3_000_000n });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`${functionName} reverted (${hash})`);
  return receipt;
}

/** The custom error a settlement-contract call from `account` reverts with (eth_call), or throws if it succeeds. */
export async function settlementRevert<F extends WriteName>(
  chain: LocalChain,
  account: Address,
  functionName: F,
  args: WriteArgs<F>,
): Promise<{ errorName: string; args: readonly unknown[] }> {
  const simulate = chain.publicClient.simulateContract as (request: object) => Promise<unknown>;
  try {
    await simulate({ ...settlement, account, functionName, args });
  } catch (error) {
    const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
    if (reverted instanceof ContractFunctionRevertedError && reverted.data) {
      return { errorName: reverted.data.errorName, args: reverted.data.args ?? [] };
    }
    throw error;
  }
  throw new Error(`${functionName} did not revert`);
}

/** The channel of `config` as the contract holds it. */
export async function channelState(chain: LocalChain, config: ChannelConfig) {
  const channelId = channelIdOf(config, chain.chainId);
  const read = chain.publicClient.readContract;
  const [[balance, totalClaimed], [withdrawAmount, withdrawInitiatedAt], refundNonce] = await Promise.all([
    read({ ...settlement, functionName: 'channels', args: [channelId] }),
    read({ ...settlement, functionName: 'pendingWithdrawals', args: [channelId] }),
    read({ ...settlement, functionName: 'refundNonce', args: [channelId] }),
  ]);
  return { channelId, balance, totalClaimed, withdrawAmount, withdrawInitiatedAt, refundNonce };
}

/** The balance of the channel `channelId` and what was claimed on it, as the contract holds them. */
export async function channelTotals(chain: LocalChain, channelId: Hex) {
  const [balance, totalClaimed] = await chain.publicClient.readContract({ ...settlement, functionName: 'channels', args: [channelId] });
  return { balance, totalClaimed };
}

/** `receivers(receiver, token)`: claimed and settled totals. */
export async function receiverState(chain: LocalChain, receiver: Address, token: Address = chain.token.address) {
  const [totalClaimed, totalSettled] = await chain.publicClient.readContract({
    ...settlement,
    functionName: 'receivers',
    args: [receiver, token],
  });
  return { totalClaimed, totalSettled };
}

/** The settlement contract's events in `receipt`, as `[name, args]` in log order. */
export function settlementEvents(receipt: TransactionReceipt): [string, Record<string, unknown>][] {
  const logs = receipt.logs.filter((log) => log.address.toLowerCase() === BATCH_SETTLEMENT_ADDRESS.toLowerCase());
  return parseEventLogs({ abi: batchSettlementAbi, logs }).map((log) => [log.eventName, log.args as Record<string, unknown>]);
}
