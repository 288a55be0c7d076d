/**
 * Helpers to drive the x402 `upto` contracts directly: the payer's one-time Permit2 approval, a
 * signed upto authorization (viem signatures), the proxy's `settle` arguments, and the custom error
 * a settle reverts with (the proxy's own or Permit2's, which the proxy passes through).
 */
import { BaseError, ContractFunctionRevertedError, type Address, type Hex, maxUint256 } from 'viem';
import { PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS, permit2Abi, uptoProxyAbi } from '../../../src/chain/upto';
import { randomPermit2Nonce, uptoTypedData, type UptoAuthorization } from 'skill-market/x402';
import { usdCoinAbi } from './abi';
import type { LocalChain, TestAccount } from './anvil';

/** Both contracts' items, so a revert of either decodes by name. */
const abi = [...uptoProxyAbi, ...permit2Abi.filter((item) => item.type === 'error')];

/** The payer approves Permit2 on the test token for `amount` (default unlimited) and waits for the receipt. */
export async function approvePermit2(chain: LocalChain, payer: TestAccount, amount = maxUint256): Promise<void> {
  const hash = await chain.walletClient(payer).writeContract({
    address: chain.token.address,
    abi: usdCoinAbi,
    functionName: 'approve',
    args: [PERMIT2_ADDRESS, amount],
  });
  await chain.publicClient.waitForTransactionReceipt({ hash });
}

export interface UptoTerms {
  max: bigint;
  to: Address;
  facilitator: Address;
  /** Unix seconds; default one hour after the chain's latest block. */
  deadline?: bigint;
  validAfter?: bigint;
  nonce?: string;
  spender?: Address;
}

/** An upto authorization of `terms` signed by `payer`, as the payload carries it. */
export async function signUpto(
  chain: LocalChain,
  payer: TestAccount,
  terms: UptoTerms,
): Promise<{ authorization: UptoAuthorization; signature: Hex }> {
  const deadline = terms.deadline ?? (await chain.publicClient.getBlock()).timestamp + 3600n;
  const authorization: UptoAuthorization = {
    from: payer.address,
    permitted: { token: chain.token.address, amount: terms.max.toString() },
    spender: terms.spender ?? UPTO_PROXY_ADDRESS,
    nonce: terms.nonce ?? randomPermit2Nonce(),
    deadline: deadline.toString(),
    witness: { to: terms.to, facilitator: terms.facilitator, validAfter: (terms.validAfter ?? 0n).toString() },
  };
  return { authorization, signature: await payer.signTypedData(uptoTypedData(authorization, chain.chainId)) };
}

/** The proxy's `settle` arguments for `amount` of a signed authorization (its witness as signed unless overridden). */
export function uptoSettleArgs(
  signed: { authorization: UptoAuthorization; signature: Hex },
  amount: bigint,
  witness: Partial<{ to: Address; facilitator: Address; validAfter: bigint }> = {},
) {
  const a = signed.authorization;
  return [
    { permitted: { token: a.permitted.token, amount: BigInt(a.permitted.amount) }, nonce: BigInt(a.nonce), deadline: BigInt(a.deadline) },
    amount,
    a.from,
    {
      to: witness.to ?? a.witness.to,
      facilitator: witness.facilitator ?? a.witness.facilitator,
      validAfter: witness.validAfter ?? BigInt(a.witness.validAfter),
    },
    signed.signature,
  ] as const;
}

/** Sends the proxy's `settle` from `facilitator` and waits for a successful receipt. */
export async function uptoSettle(chain: LocalChain, facilitator: TestAccount, args: ReturnType<typeof uptoSettleArgs>): Promise<Hex> {
  const hash = await chain.walletClient(facilitator).writeContract({
    address: UPTO_PROXY_ADDRESS,
    abi: uptoProxyAbi,
    functionName: 'settle',
    args,
    gas: 500_000n,
  });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`settle reverted (${hash})`);
  return hash;
}

/** The custom error the proxy's `settle` from `account` reverts with (eth_call); throws if it succeeds. */
export async function uptoSettleRevert(
  chain: LocalChain,
  account: Address,
  args: ReturnType<typeof uptoSettleArgs>,
): Promise<{ errorName: string; args: readonly unknown[] }> {
  try {
    await chain.publicClient.simulateContract({ address: UPTO_PROXY_ADDRESS, abi, functionName: 'settle', args, account });
  } catch (error) {
    const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
    if (reverted instanceof ContractFunctionRevertedError && reverted.data) {
      return { errorName: reverted.data.errorName, args: reverted.data.args ?? [] };
    }
    throw error;
  }
  throw new Error('settle did not revert');
}
