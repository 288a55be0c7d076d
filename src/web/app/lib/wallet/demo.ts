/**
 * The dev-only demo wallets (`market dev`): EIP-1193 providers whose keys stay in the dev server,
 * reached through `GET /dev/demo-wallet` (the demo consumer, who pays) or `GET /dev/demo-creator`
 * (the demo creator, who owns the example skills) and `POST /dev/demo-wallet/sign`. Offered only
 * when the page settings say dev mode.
 */
import { pageJson } from '../api';
import type { Eip1193Provider, WalletOption } from './provider';

const DEMO = {
  consumer: { id: 'demo', name: 'Demo wallet (dev only)', path: '/dev/demo-wallet' },
  creator: { id: 'demo-creator', name: 'demo creator (dev only)', path: '/dev/demo-creator' },
} as const;

export function demoWallet(chainId: number, who: keyof typeof DEMO = 'consumer'): WalletOption {
  const demo = DEMO[who];
  let address: string | undefined;
  const provider: Eip1193Provider = {
    async request({ method, params }) {
      switch (method) {
        case 'eth_requestAccounts':
        case 'eth_accounts':
          address ??= (await pageJson<{ address: string; label: string }>(demo.path)).address;
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
  return { id: demo.id, name: demo.name, icon: undefined, provider };
}
