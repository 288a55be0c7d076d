/**
 * A payer's timed withdrawal from a payment channel (the escape hatch when the channel's server does
 * not refund): `initiateWithdraw` of everything not claimed, then, once the channel's withdraw
 * delay has passed, `finalizeWithdraw`. Both are transactions the payer's wallet sends and pays
 * gas for, so the wallet's ETH is checked first; the contract's refusals come back in plain words
 * (`WithdrawalError`), never as a client library's error dump.
 */
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  http,
  type LocalAccount,
  type PublicClient,
} from 'viem';
import { batchSettlementAbi } from './abi';
import { BATCH_SETTLEMENT_ADDRESS } from './addresses';
import { type ChannelConfig, channelIdOf } from './typed-data';

/** A withdrawal that cannot go on, said for people. */
export class WithdrawalError extends Error {
  override name = 'WithdrawalError';
  constructor(
    message: string,
    /** `no_gas` when the wallet cannot pay for the transaction. */
    readonly code?: 'no_gas',
  ) {
    super(message);
  }
}

export interface WithdrawalTarget {
  rpcUrl: string;
  /** The payer (or its payer authorizer): it sends and pays for the transaction. */
  account: LocalAccount;
  config: ChannelConfig;
}

/** The withdrawal a channel has pending, read from the chain. */
interface PendingWithdrawal {
  amount: bigint;
  /** Unix seconds from which it can be finalized. */
  readyAt: bigint;
}

const contract = { address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi } as const;

/** Starts the timed withdrawal of everything not claimed; answers the amount, its transaction and when it can be finalized. */
export async function startWithdrawal(target: WithdrawalTarget): Promise<{ amount: bigint; transaction: `0x${string}`; readyAt: bigint }> {
  const { client, channelId } = await ready(target);
  const [balance, claimed] = await client.readContract({ ...contract, functionName: 'channels', args: [channelId] });
  const amount = balance - claimed;
  if (amount === 0n) throw new WithdrawalError('the channel holds nothing unclaimed: there is nothing to withdraw');
  const pending = await pendingWithdrawal(client, channelId, target.config);
  if (pending) throw new WithdrawalError(`a withdrawal of ${pending.amount} is already under way; finish it from ${when(pending.readyAt)}`);
  const transaction = await send(target, client, 'initiateWithdraw', [target.config, amount]);
  const block = await client.getBlock();
  return { amount, transaction, readyAt: block.timestamp + BigInt(target.config.withdrawDelay) };
}

/** Pays out a withdrawal whose delay has passed; answers its transaction. */
export async function finishWithdrawal(target: WithdrawalTarget): Promise<{ transaction: `0x${string}` }> {
  const { client, channelId } = await ready(target);
  const pending = await pendingWithdrawal(client, channelId, target.config);
  if (!pending) throw new WithdrawalError('no withdrawal is under way on this channel: start one first');
  const now = (await client.getBlock()).timestamp;
  if (now < pending.readyAt) throw new WithdrawalError(`the withdrawal can be finished from ${when(pending.readyAt)}, not yet`);
  return { transaction: await send(target, client, 'finalizeWithdraw', [target.config]) };
}

/** The channel's pending withdrawal, if any. */
async function pendingWithdrawal(
  client: PublicClient,
  channelId: `0x${string}`,
  config: ChannelConfig,
): Promise<PendingWithdrawal | undefined> {
  const [amount, initiatedAt] = await client.readContract({ ...contract, functionName: 'pendingWithdrawals', args: [channelId] });
  return Number(initiatedAt) === 0 ? undefined : { amount, readyAt: BigInt(initiatedAt) + BigInt(config.withdrawDelay) };
}

/** The chain's client and the channel id, once the wallet is known to hold ETH for gas. */
async function ready(target: WithdrawalTarget) {
  const client = createPublicClient({ transport: http(target.rpcUrl, { timeout: 15_000 }) });
  const chainId = await client.getChainId().catch(() => {
    throw new WithdrawalError(`the chain's RPC (${new URL(target.rpcUrl).host}) does not answer`);
  });
  const gas = await client.getBalance({ address: target.account.address });
  if (gas === 0n)
    throw new WithdrawalError(
      `a timed withdrawal is a transaction the payer pays gas for, and ${target.account.address} holds no ETH on chain ${chainId}: send it a little ETH`,
      'no_gas',
    );
  return { client, channelId: channelIdOf(target.config, chainId) };
}

/** Sends one of the payer's calls and waits for it; a revert comes back as a WithdrawalError. */
async function send(
  target: WithdrawalTarget,
  client: PublicClient,
  functionName: 'initiateWithdraw' | 'finalizeWithdraw',
  args: readonly unknown[],
): Promise<`0x${string}`> {
  const wallet = createWalletClient({ account: target.account, transport: http(target.rpcUrl, { timeout: 15_000 }) });
  try {
    const { request } = await client.simulateContract({ ...contract, functionName, args, account: target.account } as never);
    const transaction = await wallet.writeContract({ ...(request as object), chain: null } as never);
    const receipt = await client.waitForTransactionReceipt({ hash: transaction, timeout: 60_000 });
    if (receipt.status !== 'success') throw new WithdrawalError(`the transaction ${transaction} reverted`);
    return transaction;
  } catch (error) {
    throw plain(error);
  }
}

/** The contract's refusal in plain words. */
function plain(error: unknown): Error {
  if (error instanceof WithdrawalError || !(error instanceof BaseError)) return error as Error;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
  const name = reverted?.data?.errorName;
  const args = (reverted?.data?.args ?? []) as readonly unknown[];
  switch (name) {
    case 'WithdrawalAlreadyPending':
      return new WithdrawalError('a withdrawal is already under way on this channel');
    case 'NoPendingWithdrawal':
      return new WithdrawalError('no withdrawal is under way on this channel: start one first');
    case 'WithdrawalNotReady':
      return new WithdrawalError(`the withdrawal can be finished from ${when(BigInt(args[1] as bigint))}, not yet`);
    case 'AmountExceedsUnclaimed':
      return new WithdrawalError('the server claimed part of the channel meanwhile: ask again for what is left');
    case 'Unauthorized':
      return new WithdrawalError('only the channel’s payer (or its payer authorizer) can withdraw from it');
    case 'ZeroAmount':
      return new WithdrawalError('the channel holds nothing unclaimed: there is nothing to withdraw');
  }
  if (/insufficient funds/i.test(error.message))
    return new WithdrawalError('the wallet holds too little ETH for the transaction’s gas', 'no_gas');
  return new WithdrawalError(`the transaction was refused: ${error.shortMessage}`);
}

/** A unix time for people, with how far off it is. */
function when(at: bigint): string {
  const date = new Date(Number(at) * 1000);
  const minutes = Math.max(0, Math.ceil((date.getTime() - Date.now()) / 60_000));
  return `${date.toISOString().replace('.000', '')}${minutes > 0 ? ` (in about ${minutes} min)` : ''}`;
}
