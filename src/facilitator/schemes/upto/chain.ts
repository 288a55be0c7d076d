/**
 * The upto scheme on chain: the proxy's `settle` calldata of an authorization, and the reads of
 * verify (signature, balance, Permit2 allowance, spent nonce, a simulated settle).
 */
import {
  BaseError,
  ContractFunctionRevertedError,
  encodeFunctionData,
  erc20Abi,
  recoverTypedDataAddress,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS, uptoTypedData, type UptoPayload } from 'skill-market/x402';
import { permit2Abi, uptoProxyAbi } from '../../../chain/upto/abi';
import { revertText, type Rejection } from '../../chain';
import { REASONS } from './reasons';

/** Both contracts' errors, so a revert of either decodes by name. */
const settleAbi = [...uptoProxyAbi, ...permit2Abi.filter((item) => item.type === 'error')];

/** Gas bound of one settle (a Permit2 witness transfer through the proxy uses ~90k, a first payee more). */
export const SETTLE_GAS = 250_000n;

/** The proxy's `settle` call moving `amount` of `payment`. */
export function settleCall(payment: UptoPayload, amount: bigint): { to: Address; data: Hex } {
  const a = payment.permit2Authorization;
  const data = encodeFunctionData({
    abi: uptoProxyAbi,
    functionName: 'settle',
    args: [
      { permitted: { token: a.permitted.token, amount: BigInt(a.permitted.amount) }, nonce: BigInt(a.nonce), deadline: BigInt(a.deadline) },
      amount,
      a.from,
      { to: a.witness.to, facilitator: a.witness.facilitator, validAfter: BigInt(a.witness.validAfter) },
      payment.signature,
    ],
  });
  return { to: UPTO_PROXY_ADDRESS, data };
}

/** Why a settle reverts, in the scheme's reasons (the proxy's errors and Permit2's, as the reference maps them). */
function revertReason(error: unknown): Rejection {
  const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
  const name = reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : undefined;
  const byName: Record<string, string> = {
    InvalidNonce: REASONS.nonceUsed,
    InvalidSignature: REASONS.invalidSignature,
    SignatureExpired: REASONS.deadlineExpired,
    AmountExceedsPermitted: REASONS.settlementExceedsAmount,
    UnauthorizedFacilitator: REASONS.facilitatorMismatch,
    PaymentTooEarly: REASONS.notYetValid,
  };
  return { reason: (name && byName[name]) || REASONS.simulationFailed, message: `The settlement would revert: ${revertText(error)}` };
}

export function createUptoChain(client: PublicClient) {
  return {
    /** Whether `payment`'s signature is its payer's: ECDSA, else ERC-1271 (or ERC-6492) for a contract wallet. */
    async signedByPayer(payment: UptoPayload, chainId: number): Promise<boolean> {
      const typed = uptoTypedData(payment.permit2Authorization, chainId);
      const payer = payment.permit2Authorization.from;
      const recovered = await recoverTypedDataAddress({ ...typed, signature: payment.signature }).catch(() => undefined);
      if (recovered?.toLowerCase() === payer.toLowerCase()) return true;
      const code = await client.getCode({ address: payer });
      if (!code || code === '0x') return false;
      return client.verifyTypedData({ address: payer, ...typed, signature: payment.signature }).catch(() => false);
    },

    /** The payer's token balance and allowance to Permit2. */
    async funds(asset: Address, payer: Address): Promise<{ balance: bigint; allowance: bigint }> {
      const [balance, allowance] = await Promise.all([
        client.readContract({ address: asset, abi: erc20Abi, functionName: 'balanceOf', args: [payer] }),
        client.readContract({ address: asset, abi: erc20Abi, functionName: 'allowance', args: [payer, PERMIT2_ADDRESS] }),
      ]);
      return { balance, allowance };
    },

    /** Whether Permit2 already spent the nonce. */
    async nonceSpent(payer: Address, nonce: bigint): Promise<boolean> {
      const word = await client.readContract({
        address: PERMIT2_ADDRESS,
        abi: permit2Abi,
        functionName: 'nonceBitmap',
        args: [payer, nonce >> 8n],
      });
      return (word & (1n << (nonce & 255n))) !== 0n;
    },

    /** eth_call of the settle of `amount` from `facilitator`: undefined when it would succeed, else why not. */
    async simulate(payment: UptoPayload, amount: bigint, facilitator: Address): Promise<Rejection | undefined> {
      const a = payment.permit2Authorization;
      try {
        await client.simulateContract({
          address: UPTO_PROXY_ADDRESS,
          abi: settleAbi,
          functionName: 'settle',
          account: facilitator,
          args: [
            {
              permitted: { token: a.permitted.token, amount: BigInt(a.permitted.amount) },
              nonce: BigInt(a.nonce),
              deadline: BigInt(a.deadline),
            },
            amount,
            a.from,
            { to: a.witness.to, facilitator: a.witness.facilitator, validAfter: BigInt(a.witness.validAfter) },
            payment.signature,
          ],
        });
        return undefined;
      } catch (error) {
        return revertReason(error);
      }
    },

    /** Whether Permit2 and the proxy both have code: the names of those without. */
    async missing(): Promise<string[]> {
      const [permit2, proxy] = await Promise.all([
        client.getCode({ address: PERMIT2_ADDRESS }),
        client.getCode({ address: UPTO_PROXY_ADDRESS }),
      ]);
      return [
        ...(!permit2 || permit2 === '0x' ? [`${PERMIT2_ADDRESS} (Permit2)`] : []),
        ...(!proxy || proxy === '0x' ? [`${UPTO_PROXY_ADDRESS} (x402UptoPermit2Proxy)`] : []),
      ];
    },
  };
}
