/**
 * Who signs payments: one abstraction over EIP-712 `signTypedData`, whatever holds the key. A 0x
 * private key or a viem account (one opened from a keystore with `loadSpendingWallet`) signs in
 * this process; a browser wallet signs over EIP-1193 (`eth_signTypedData_v4`) and shows the user
 * what they sign. Schemes sign whatever typed data they need (an EIP-3009 authorization today, a
 * channel voucher or deposit tomorrow) through the same signer. Keys never leave where they are;
 * errors never echo them.
 */
import { getAddress, getTypesForEIP712Domain, serializeTypedData, stringToHex, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Address, Hex, TypedDataSigner } from '../x402/index';
import { ADDRESS_PATTERN } from '../x402/patterns';

/** One field of an EIP-712 struct type. */
export interface TypedDataField {
  name: string;
  type: string;
}

/** EIP-712 typed data of any primary type (numbers as bigint or number, as viem takes them). */
export interface PaymentTypedData {
  domain: { name?: string; version?: string; chainId?: number; verifyingContract?: Address; salt?: Hex };
  types: Record<string, readonly TypedDataField[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/** Anything that signs EIP-712 typed data for one address: the signer every payment scheme uses. */
export interface PaymentSigner {
  readonly address: Address;
  /** The 65-byte signature (or a contract wallet's) as 0x-hex. */
  signTypedData(typedData: PaymentTypedData): Promise<Hex>;
  /**
   * Signs a 32-byte EIP-712 digest the scheme computed itself (the same signature `signTypedData`
   * gives for that typed data): present only for a key held in this process, so a scheme signs a
   * voucher per call without viem's generic typed-data encoding. A wallet that shows the user what
   * they sign has none.
   */
  signDigest?(digest: Hex): Promise<Hex>;
  /** Signs a text message (EIP-191): an x402 sign-in for a free trial. Present for a key held in this process. */
  signText?(message: string): Promise<Hex>;
}

/** A wallet that pays: a 0x private key, or a viem account (e.g. `loadSpendingWallet(...)`). */
export type WalletInput = string | LocalAccount | TypedDataSigner;

const PRIVATE_KEY = /^(0x)?[0-9a-fA-F]{64}$/;
const HEX_SIGNATURE = /^0x[0-9a-fA-F]+$/;

/**
 * The signer for a wallet held in this process: a 0x private key, a viem account, or any object
 * with an address and `signTypedData`.
 *
 * @example toPaymentSigner(process.env.MARKET_PRIVATE_KEY!).address // the paying address
 * @throws TypeError (without the key in the message) when `wallet` is neither form
 */
export function toPaymentSigner(wallet: WalletInput | PaymentSigner): PaymentSigner {
  if (typeof wallet === 'string') {
    const key = wallet.trim();
    if (!PRIVATE_KEY.test(key)) throw new TypeError('SkillMarket: wallet must be a 0x-prefixed 32-byte hex private key or a viem account');
    return accountSigner(privateKeyToAccount((key.startsWith('0x') ? key : `0x${key}`) as Hex));
  }
  if (
    typeof wallet !== 'object' ||
    wallet === null ||
    typeof wallet.signTypedData !== 'function' ||
    typeof wallet.address !== 'string' ||
    !ADDRESS_PATTERN.test(wallet.address)
  ) {
    throw new TypeError('SkillMarket: wallet must be a private key or an account with an address and signTypedData()');
  }
  return accountSigner(wallet as PaymentSigner);
}

/** Bound, so an account whose methods read `this` keeps working. */
function accountSigner(account: PaymentSigner | LocalAccount): PaymentSigner {
  const sign = account.signTypedData as (typedData: PaymentTypedData) => Promise<Hex>;
  const signer: PaymentSigner = {
    address: getAddress(account.address.toLowerCase()),
    signTypedData: (typedData) => sign.call(account, typedData),
  };
  if ('signMessage' in account && typeof account.signMessage === 'function') {
    const signMessage = account.signMessage as (args: { message: string }) => Promise<Hex>;
    signer.signText = (message) => signMessage.call(account, { message });
  }
  if ('signDigest' in account && typeof account.signDigest === 'function') {
    const signDigest = account.signDigest;
    return { ...signer, signDigest: (digest) => signDigest.call(account, digest) };
  }
  // A viem local account signs a raw hash with `sign`: exactly what signTypedData does after hashing.
  if ('type' in account && account.type === 'local' && typeof account.sign === 'function') {
    const signHash = account.sign;
    return { ...signer, signDigest: (digest) => signHash.call(account, { hash: digest }) };
  }
  return signer;
}

/** The part of an EIP-1193 provider (an injected browser wallet) a signer uses. */
export interface Eip1193Requester {
  request(args: { method: string; params?: unknown[] | Record<string, unknown> }): Promise<unknown>;
}

/**
 * The signer of a browser wallet: `eth_signTypedData_v4`, after asking the wallet to switch to
 * the chain the typed data names when it is on another one. The wallet shows the user what they
 * sign; a refusal rejects with the wallet's error (EIP-1193 code 4001).
 *
 * @example
 * const [address] = (await window.ethereum.request({ method: 'eth_requestAccounts' })) as `0x${string}`[];
 * const signer = eip1193Signer(window.ethereum, address);
 * await call.pay(signer); // a PaidCall quoted by PaymentPipeline.start(...).quote()
 */
export function eip1193Signer(provider: Eip1193Requester, address: Address): PaymentSigner {
  return {
    address: getAddress(address.toLowerCase()),
    async signTypedData(typedData) {
      if (typedData.domain.chainId !== undefined) await ensureChain(provider, Number(typedData.domain.chainId));
      // eth_signTypedData_v4 wants the domain's own type listed and numbers as strings.
      const full = { ...typedData, types: { EIP712Domain: getTypesForEIP712Domain({ domain: typedData.domain }), ...typedData.types } };
      const signature = await provider.request({ method: 'eth_signTypedData_v4', params: [address, serializeTypedData(full as never)] });
      if (typeof signature !== 'string' || !HEX_SIGNATURE.test(signature)) throw new Error('The wallet returned no signature.');
      return signature as Hex;
    },
    // A sign-in (a free trial's): the wallet's personal_sign of the message.
    async signText(message) {
      const signature = await provider.request({ method: 'personal_sign', params: [stringToHex(message), address] });
      if (typeof signature !== 'string' || !HEX_SIGNATURE.test(signature)) throw new Error('The wallet returned no signature.');
      return signature as Hex;
    },
  };
}

/** Asks the wallet to use `chainId` when it is on another chain (typed-data domains name the chain). */
async function ensureChain(provider: Eip1193Requester, chainId: number): Promise<void> {
  const current = await provider.request({ method: 'eth_chainId' });
  if (typeof current === 'string' && Number.parseInt(current, 16) === chainId) return;
  await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: `0x${chainId.toString(16)}` }] });
}
