/**
 * The scheme's verification rules (spec "Verification Rules" 1–10) for the payloads a client pays
 * with: the config hashes to the channel id and matches the requirements, the voucher is the
 * payer's, the deposit authorization is the payer's and within its window, and the channel (plus
 * the deposit) covers the voucher. Each failure names the spec's reason code.
 */
import { getAddress, recoverTypedDataAddress, zeroAddress, type Hex, type PublicClient } from 'viem';
import {
  BATCH_SETTLEMENT_REASONS as R,
  batchSettlementDomain,
  channelIdOf,
  erc3009DepositNonce,
  receiveWithAuthorizationTypes,
  sameAddress,
  voucherTypes,
  type BatchClientPayload,
  type BatchRequirements,
  type ChannelConfig,
  type DepositPayload,
  type VoucherFields,
} from 'skill-market/x402';
import { readTokenBalance } from '../../../chain/token/balance';
import { DEPOSIT_COLLECTOR, type ChannelState } from './contract';
import type { Rejection } from '../../chain';

/** Seconds an ERC-3009 authorization must still be valid for (as the exact scheme). */
const VALID_BEFORE_MARGIN_SECONDS = 6;

const reject = (reason: string, message: string): Rejection => ({ reason, message });

/** Rules 1–5: the config is the channel's and matches the requirements. */
export function checkChannelConfig(payload: BatchClientPayload, requirements: BatchRequirements, chainId: number): Rejection | undefined {
  const config = payload.channelConfig;
  if (channelIdOf(config, chainId).toLowerCase() !== payload.voucher.channelId.toLowerCase()) {
    return reject(R.channelIdMismatch, 'The channel config does not hash to voucher.channelId on this chain');
  }
  if (!sameAddress(config.token, requirements.asset)) return reject(R.tokenMismatch, 'The channel token is not the requirements asset');
  if (!sameAddress(config.receiver, requirements.payTo)) return reject(R.receiverMismatch, 'The channel receiver is not payTo');
  const extra = requirements.extra ?? {};
  const authorizer = extra.receiverAuthorizer;
  if (typeof authorizer !== 'string' || !sameAddress(authorizer, config.receiverAuthorizer) || sameAddress(authorizer, zeroAddress)) {
    return reject(R.receiverAuthorizerMismatch, 'The channel receiverAuthorizer is not extra.receiverAuthorizer');
  }
  if (extra.withdrawDelay !== undefined && Number(extra.withdrawDelay) !== config.withdrawDelay) {
    return reject(R.withdrawDelayMismatch, 'The channel withdrawDelay is not extra.withdrawDelay');
  }
  return undefined;
}

/**
 * Rule 6: the voucher recovers to the payer authorizer (ECDSA), or, when that is zero, is the
 * payer's signature (ECDSA, ERC-1271 or ERC-6492, through the node).
 */
export async function voucherSigned(
  client: PublicClient,
  config: ChannelConfig,
  voucher: VoucherFields,
  chainId: number,
): Promise<boolean> {
  const typed = {
    domain: batchSettlementDomain(chainId),
    types: voucherTypes,
    primaryType: 'Voucher' as const,
    message: { channelId: voucher.channelId, maxClaimableAmount: BigInt(voucher.maxClaimableAmount) },
  };
  try {
    if (!sameAddress(config.payerAuthorizer, zeroAddress)) {
      return sameAddress(await recoverTypedDataAddress({ ...typed, signature: voucher.signature }), config.payerAuthorizer);
    }
    return await client.verifyTypedData({ address: getAddress(config.payer), ...typed, signature: voucher.signature });
  } catch {
    return false;
  }
}

/** The ERC-3009 nonce a deposit's authorization signs (it binds the channel). */
export function depositNonce(payload: DepositPayload): Hex {
  const auth = payload.deposit.authorization.erc3009Authorization;
  return erc3009DepositNonce(payload.voucher.channelId, BigInt(auth?.salt ?? 0));
}

/** The deposit's ERC-3009 authorization: present, EIP-712 domain named, within its window, signed by the payer. */
export async function checkDepositAuthorization(
  client: PublicClient,
  payload: DepositPayload,
  requirements: BatchRequirements,
  chainId: number,
  nowSeconds: number,
): Promise<Rejection | undefined> {
  const auth = payload.deposit.authorization.erc3009Authorization;
  if (!auth)
    return reject(R.erc3009AuthorizationRequired, 'Only ERC-3009 deposits are settled here (deposit.authorization.erc3009Authorization)');
  const { name, version } = requirements.extra ?? {};
  if (typeof name !== 'string' || typeof version !== 'string')
    return reject(R.missingEip712Domain, 'extra.name and extra.version are required');
  if (BigInt(auth.validAfter) > BigInt(nowSeconds)) return reject(R.validAfter, 'The deposit authorization is not valid yet');
  if (BigInt(auth.validBefore) < BigInt(nowSeconds + VALID_BEFORE_MARGIN_SECONDS)) {
    return reject(R.validBefore, 'The deposit authorization has expired');
  }
  const payer = getAddress(payload.channelConfig.payer);
  const valid = await client
    .verifyTypedData({
      address: payer,
      domain: { name, version, chainId, verifyingContract: getAddress(requirements.asset) },
      types: receiveWithAuthorizationTypes,
      primaryType: 'ReceiveWithAuthorization',
      message: {
        from: payer,
        to: DEPOSIT_COLLECTOR,
        value: BigInt(payload.deposit.amount),
        validAfter: BigInt(auth.validAfter),
        validBefore: BigInt(auth.validBefore),
        nonce: depositNonce(payload),
      },
      signature: auth.signature,
    })
    .catch(() => false);
  return valid ? undefined : reject(R.receiveAuthorizationSignature, 'The receiveWithAuthorization signature is not the payer’s');
}

/** Rules 7, 9, 10: the channel (with the deposit, if any) covers the voucher, which is above what is claimed. */
export function checkCoverage(payload: BatchClientPayload, state: ChannelState): Rejection | undefined {
  const max = BigInt(payload.voucher.maxClaimableAmount);
  const deposit = payload.type === 'deposit' ? BigInt(payload.deposit.amount) : 0n;
  if (payload.type !== 'deposit' && state.balance === 0n)
    return reject(R.channelNotFound, 'No channel with a positive balance has this id');
  if (max > state.balance + deposit) {
    return reject(R.cumulativeExceedsBalance, `The voucher's ${max} exceeds the channel's ${state.balance + deposit}`);
  }
  // Refund vouchers are zero-charge and deposits may restate the claimed total: equal is fine for them.
  const below = payload.type === 'voucher' ? max <= state.totalClaimed : max < state.totalClaimed;
  if (below) return reject(R.cumulativeBelowClaimed, `The voucher's ${max} is not above the ${state.totalClaimed} claimed`);
  return undefined;
}

/** Rule 8: the payer holds the deposit. */
export async function checkPayerBalance(client: PublicClient, payload: DepositPayload): Promise<Rejection | undefined> {
  const balance = await readTokenBalance(client, getAddress(payload.channelConfig.token), getAddress(payload.channelConfig.payer));
  return balance < BigInt(payload.deposit.amount)
    ? reject(R.insufficientBalance, `The payer holds ${balance} of the ${payload.deposit.amount} deposited`)
    : undefined;
}
