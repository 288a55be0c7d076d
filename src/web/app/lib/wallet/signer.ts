/**
 * Signing the EIP-4361 sign-in message through a connected wallet (`personal_sign`). Payments
 * are signed by the SDK's EIP-1193 signer (eip1193Signer of skill-market/client, lib/pay.ts).
 */
import { stringToHex, type Hex } from 'viem';
import type { Eip1193Provider } from './provider';

const HEX_SIGNATURE = /^0x[0-9a-fA-F]+$/;

function signature(value: unknown): Hex {
  if (typeof value !== 'string' || !HEX_SIGNATURE.test(value)) throw new Error('The wallet returned no signature.');
  return value as Hex;
}

export async function signMessage(provider: Eip1193Provider, address: string, message: string): Promise<Hex> {
  return signature(await provider.request({ method: 'personal_sign', params: [stringToHex(message), address] }));
}
