/**
 * Signing through a connected wallet: the EIP-4361 sign-in message (`personal_sign`) and the
 * EIP-3009 payment authorization (`eth_signTypedData_v4`), as the x402 codec's TypedDataSigner.
 */
import { getTypesForEIP712Domain, serializeTypedData, stringToHex, type Hex } from 'viem';
import type { AuthorizationTypedData, TypedDataSigner } from 'skill-market/x402';
import type { Eip1193Provider } from './provider';

const HEX_SIGNATURE = /^0x[0-9a-fA-F]+$/;

function signature(value: unknown): Hex {
  if (typeof value !== 'string' || !HEX_SIGNATURE.test(value)) throw new Error('The wallet returned no signature.');
  return value as Hex;
}

export async function signMessage(provider: Eip1193Provider, address: string, message: string): Promise<Hex> {
  return signature(await provider.request({ method: 'personal_sign', params: [stringToHex(message), address] }));
}

/** The wallet as the signer `signAuthorization` takes; the wallet shows the transfer to the user. */
export function typedDataSigner(provider: Eip1193Provider, address: `0x${string}`): TypedDataSigner {
  return {
    address,
    async signTypedData(typedData: AuthorizationTypedData) {
      // eth_signTypedData_v4 wants the domain's own type listed and numbers as strings.
      const full = { ...typedData, types: { EIP712Domain: getTypesForEIP712Domain({ domain: typedData.domain }), ...typedData.types } };
      return signature(await provider.request({ method: 'eth_signTypedData_v4', params: [address, serializeTypedData(full as never)] }));
    },
  };
}

/** Asks the wallet to use `chainId` when it is on another chain (typed-data domains name the chain). */
export async function ensureChain(provider: Eip1193Provider, chainId: number): Promise<void> {
  const current = await provider.request({ method: 'eth_chainId' });
  if (typeof current === 'string' && Number.parseInt(current, 16) === chainId) return;
  await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: `0x${chainId.toString(16)}` }] });
}
