/**
 * The dev-only demo wallet (`market dev`): an EIP-1193 provider whose key stays in the dev
 * server, reached through `GET /dev/demo-wallet` and `POST /dev/demo-wallet/sign`. Offered only
 * when the page settings say dev mode.
 */
import { pageJson } from '../api';
import type { Eip1193Provider, WalletOption } from './provider';

export function demoWallet(chainId: number): WalletOption {
  let address: string | undefined;
  const provider: Eip1193Provider = {
    async request({ method, params }) {
      switch (method) {
        case 'eth_requestAccounts':
        case 'eth_accounts':
          address ??= (await pageJson<{ address: string; label: string }>('/dev/demo-wallet')).address;
          return [address];
        case 'eth_chainId':
          return `0x${chainId.toString(16)}`;
        case 'personal_sign':
        case 'eth_signTypedData_v4':
          return (await pageJson<{ result: string }>('/dev/demo-wallet/sign', { method, params })).result;
        default:
          throw Object.assign(new Error(`The demo wallet does not support ${method}`), { code: 4200 });
      }
    },
  };
  return { id: 'demo', name: 'Demo wallet (dev only)', icon: undefined, provider };
}
