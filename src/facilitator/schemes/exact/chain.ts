/**
 * The exact scheme on chain: the token surface it calls (ERC-20 plus EIP-3009), the
 * `transferWithAuthorization` calldata of a payment, and the reads of verify and settle.
 */
import { BaseError, encodeFunctionData, erc20Abi, type Address, type Hex, type PublicClient } from 'viem';
import { eip3009Abi, splitSignature, type AuthorizationTypedData } from 'skill-market/x402';
import { readTokenBalance } from '../../../chain/token/balance';
import { revertText, type Rejection } from '../../chain';
import { REASONS } from './reasons';
import type { PaymentRequest } from './request';

/** The token surface the facilitator uses (FiatToken v2 compatible): ERC-20 plus EIP-3009. */
export const tokenAbi = [...erc20Abi, ...eip3009Abi] as const;

/** How the payer's signature was checked: recovered (EOA) or `isValidSignature` (contract wallet). */
export type SignerKind = 'ecdsa' | 'erc1271';

/** The token's EIP-712 name and version as read on chain (version undefined when absent). */
interface TokenDomain {
  name: string;
  version: string | undefined;
}

/** A `transferWithAuthorization` call, ready to simulate or send. */
export interface TransferCall {
  to: Address;
  data: Hex;
}

/**
 * The calldata settling `request`: the `(v, r, s)` overload for ECDSA signatures, the
 * `bytes signature` overload for contract wallets (FiatToken v2.2 hands those to ERC-1271).
 */
export function transferCall(request: PaymentRequest, kind: SignerKind): TransferCall {
  const calls = transferCalls(request);
  return { to: request.requirements.asset, data: kind === 'ecdsa' ? (calls.ecdsa ?? calls.bytes) : calls.bytes };
}

/** The calldata of both overloads (`ecdsa` undefined when the signature is not 65 bytes). */
export function transferCalls(request: PaymentRequest): { ecdsa: Hex | undefined; bytes: Hex } {
  const a = request.payment.authorization;
  const head = [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce] as const;
  const signature = request.payment.signature;
  let ecdsa: Hex | undefined;
  try {
    const { v, r, s } = splitSignature(signature);
    ecdsa = encodeFunctionData({ abi: tokenAbi, functionName: 'transferWithAuthorization', args: [...head, v, r, s] });
  } catch {
    ecdsa = undefined; // not a 65-byte signature: only a contract wallet can check it
  }
  return { ecdsa, bytes: encodeFunctionData({ abi: tokenAbi, functionName: 'transferWithAuthorization', args: [...head, signature] }) };
}

/** On-chain reads of verify and settle, over one viem public client. Token domains are cached. */
export interface ChainReader {
  /** The token's name()/version(), cached; undefined when the address holds no contract. */
  tokenDomain(asset: Address): Promise<TokenDomain | undefined>;
  hasCode(address: Address): Promise<boolean>;
  /** ERC-1271 (and ERC-6492) check of a contract wallet's signature over typed data. */
  verifyContractSignature(address: Address, typedData: AuthorizationTypedData, signature: Hex): Promise<boolean>;
  /** eth_call of the transfer from `from`: undefined when it would succeed, else why not. */
  simulate(call: TransferCall, from: Address, request: PaymentRequest): Promise<Rejection | undefined>;
  /** Gas for the transfer from `from`, or why it would revert. */
  estimateGas(call: TransferCall, from: Address, request: PaymentRequest): Promise<{ gas: bigint } | Rejection>;
  authorizationUsed(asset: Address, payer: Address, nonce: Hex): Promise<boolean>;
  /** The payer's token balance (latest block). */
  balanceOf(asset: Address, payer: Address): Promise<bigint>;
  /** Why the transfer of `request` failed on chain: nonce used, balance short, or a generic failure. */
  explainRevert(request: PaymentRequest, error?: unknown): Promise<Rejection>;
}

export function createChainReader(client: PublicClient): ChainReader {
  const domains = new Map<string, Promise<TokenDomain | undefined>>();

  const readDomain = async (asset: Address): Promise<TokenDomain | undefined> => {
    const code = await client.getCode({ address: asset });
    if (code === undefined || code === '0x') return undefined;
    const [name, version] = await Promise.all([
      client.readContract({ address: asset, abi: tokenAbi, functionName: 'name' }),
      client.readContract({ address: asset, abi: tokenAbi, functionName: 'version' }).catch(() => undefined),
    ]);
    return { name, version };
  };

  const authorizationUsed = (asset: Address, payer: Address, nonce: Hex) =>
    client.readContract({ address: asset, abi: tokenAbi, functionName: 'authorizationState', args: [payer, nonce] });

  /** Why a transfer reverts: on-chain state first (as the reference diagnoses), then the revert text. */
  const diagnose = async (request: PaymentRequest, error: unknown): Promise<Rejection> => {
    const a = request.payment.authorization;
    const asset = request.requirements.asset;
    const text = revertText(error);
    const [used, balance] = await Promise.all([
      authorizationUsed(asset, request.payer, a.nonce).catch(() => undefined),
      readTokenBalance(client, asset, request.payer).catch(() => undefined),
    ]);
    if (used === true) return { reason: REASONS.nonceAlreadyUsed, message: 'The authorization was already used on chain' };
    if (balance !== undefined && balance < BigInt(a.value)) {
      return { reason: REASONS.insufficientBalance, message: `The payer holds ${balance} of the ${a.value} authorized` };
    }
    if (/expired/i.test(text)) return { reason: REASONS.validBefore, message: text };
    if (/not yet valid/i.test(text)) return { reason: REASONS.validAfter, message: text };
    if (/invalid signature/i.test(text)) return { reason: REASONS.invalidSignature, message: text };
    return { reason: error instanceof BaseError ? REASONS.simulationFailed : REASONS.transactionFailed, message: text };
  };

  return {
    tokenDomain(asset) {
      const key = asset.toLowerCase();
      let domain = domains.get(key);
      if (!domain) {
        domain = readDomain(asset);
        domains.set(key, domain);
        // Cache tokens found, not failures or empty addresses: neither may pin an asset as broken.
        domain.then(
          (found) => void (found ? undefined : domains.delete(key)),
          () => void domains.delete(key),
        );
      }
      return domain;
    },
    async hasCode(address) {
      const code = await client.getCode({ address });
      return code !== undefined && code !== '0x';
    },
    verifyContractSignature: (address, typedData, signature) => client.verifyTypedData({ address, ...typedData, signature }),
    async simulate(call, from, request) {
      try {
        await client.call({ account: from, to: call.to, data: call.data });
        return undefined;
      } catch (error) {
        if (!isRevert(error)) throw error;
        return diagnose(request, error);
      }
    },
    async estimateGas(call, from, request) {
      try {
        return { gas: await client.estimateGas({ account: from, to: call.to, data: call.data }) };
      } catch (error) {
        if (!isRevert(error)) throw error;
        return diagnose(request, error);
      }
    },
    authorizationUsed,
    balanceOf: (asset, payer) => readTokenBalance(client, asset, payer),
    explainRevert: (request, error) => diagnose(request, error ?? new Error('The transaction reverted')),
  };
}

/** True when the node executed the call and it reverted (as opposed to the RPC failing). */
function isRevert(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return /revert/i.test(`${error.shortMessage} ${error.details}`);
}
