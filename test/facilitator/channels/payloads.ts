/**
 * Hand-made `batch-settlement` facilitator requests for our facilitator: a payer's deposit (an
 * ERC-3009 ReceiveWithAuthorization to the collector plus its voucher), vouchers and claims, signed
 * by the chain's accounts, for channels naming our facilitator's receiver authorizer by default.
 */
import { type Address, type Hex, type LocalAccount, toHex, zeroAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { BatchRequirements, ChannelConfig } from 'skill-market/x402';
import { channelIdOf } from '../../../src/chain/batch-settlement';
import { deriveAuthorizerKey } from '../../../src/config';
import { type LocalChain, type TestAccount, channelConfig, signDepositAuthorization, signVoucher } from '../../support/chain';

export const PRICE = 1_000n;

/** Our facilitator's receiver authorizer (derived from the chain's relayer key, as the fixture runs it). */
export const ourAuthorizer = (chain: LocalChain): Address =>
  privateKeyToAccount(deriveAuthorizerKey(chain.accounts.relayer.privateKey)).address;

export function channelRequirements(
  chain: LocalChain,
  payTo: Address,
  receiverAuthorizer: Address = ourAuthorizer(chain),
): BatchRequirements {
  return {
    scheme: 'batch-settlement',
    network: chain.network,
    amount: `${PRICE}`,
    asset: chain.token.address,
    payTo,
    maxTimeoutSeconds: 3600,
    extra: { receiverAuthorizer, withdrawDelay: 900, name: chain.token.name, version: chain.token.version },
  };
}

/** A channel from `payer` to `receiver` naming `receiverAuthorizer` (ours by default). */
export function newChannel(chain: LocalChain, payer: TestAccount, receiver: Address, receiverAuthorizer: Address = ourAuthorizer(chain)) {
  const config = channelConfig(chain, { payer: payer.address, payerAuthorizer: zeroAddress, receiver, receiverAuthorizer });
  return { config, channelId: channelIdOf(config, chain.chainId) };
}

export const body = (requirements: BatchRequirements, payload: unknown) => ({
  x402Version: 2,
  paymentPayload: { x402Version: 2, accepted: requirements, payload },
  paymentRequirements: requirements,
});

/** A voucher payload on `config` for `max`, signed by `signer` (the payer unless given). */
export async function voucherPayload(chain: LocalChain, signer: LocalAccount, config: ChannelConfig, max: bigint) {
  return {
    type: 'voucher' as const,
    channelConfig: config,
    voucher: {
      channelId: channelIdOf(config, chain.chainId),
      maxClaimableAmount: `${max}`,
      signature: await signVoucher(chain, signer, config, max),
    },
  };
}

/** A deposit payload of `amount` into `config`'s channel with a voucher for `max`. */
export async function depositPayload(chain: LocalChain, payer: TestAccount, config: ChannelConfig, amount: bigint, max: bigint) {
  const { salt, validBefore, signature } = await signDepositAuthorization(chain, payer, config, amount);
  const voucher = await voucherPayload(chain, payer, config, max);
  return {
    ...voucher,
    type: 'deposit' as const,
    deposit: {
      amount: `${amount}`,
      authorization: {
        erc3009Authorization: { validAfter: '0', validBefore: `${validBefore}`, salt: toHex(salt, { size: 32 }), signature },
      },
    },
  };
}

/** A claim row of `config`'s voucher for `max`, claiming `total`. */
export async function claimRowOf(chain: LocalChain, payer: LocalAccount, config: ChannelConfig, max: bigint, total: bigint) {
  return {
    voucher: { channel: config, maxClaimableAmount: `${max}` },
    signature: await signVoucher(chain, payer, config, max),
    totalClaimed: `${total}`,
  };
}

export type { Hex };
