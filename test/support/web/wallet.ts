/**
 * A test wallet inside the page: an EIP-1193 provider announced by EIP-6963 before any page
 * script runs, forwarding each request to a viem account in the test process
 * (`page.exposeFunction`). The test can make it decline the next request, and reads what it signed.
 * {@link walletPage} opens a page with one.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import type { Hex, LocalAccount } from 'viem';
import { newContext, pageErrors } from './browser';

export interface TestWallet {
  account: LocalAccount;
  /** Every request the page made, in order. */
  requests: { method: string; params: unknown[] }[];
  /** The next request that needs the user's consent is declined (EIP-1193 code 4001). */
  declineNext(): void;
}

const ICON = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24"><rect width="24" height="24" rx="6" fill="#7c3aed"/></svg>')}`;

export async function injectWallet(
  context: BrowserContext,
  account: LocalAccount,
  chainId: number,
  name = 'Test Wallet',
): Promise<TestWallet> {
  const wallet: TestWallet = {
    account,
    requests: [],
    declineNext: () => {
      decline = true;
    },
  };
  let decline = false;
  const consent = new Set(['eth_requestAccounts', 'personal_sign', 'eth_signTypedData_v4']);
  await context.exposeFunction('__testWallet', async (method: string, paramsJson: string) => {
    const params = JSON.parse(paramsJson) as unknown[];
    wallet.requests.push({ method, params });
    if (decline && consent.has(method)) {
      decline = false;
      return JSON.stringify({ error: { code: 4001, message: 'User rejected the request.' } });
    }
    const result = await answer(account, chainId, method, params);
    return JSON.stringify(result === undefined ? { error: { code: 4200, message: `Unsupported method ${method}` } } : { result });
  });
  // Page-side source (a string: it runs in the browser, not here).
  await context.addInitScript(`(() => {
    const provider = {
      async request({ method, params }) {
        const reply = JSON.parse(await window.__testWallet(method, JSON.stringify(params ?? [])));
        if (reply.error) throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
        return reply.result;
      },
      on() {},
      removeListener() {},
    };
    const info = { uuid: 'b0f3c8d2-6d6e-4c41-9d55-2d7c2f3a1e01', name: ${JSON.stringify(name)}, icon: ${JSON.stringify(ICON)}, rdns: 'test.wallet' };
    const detail = Object.freeze({ info, provider });
    const announce = () => window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail }));
    window.addEventListener('eip6963:requestProvider', announce);
    announce();
  })();`);
  return wallet;
}

async function answer(account: LocalAccount, chainId: number, method: string, params: unknown[]): Promise<unknown> {
  switch (method) {
    case 'eth_requestAccounts':
    case 'eth_accounts':
      return [account.address];
    case 'eth_chainId':
      return `0x${chainId.toString(16)}`;
    case 'wallet_switchEthereumChain':
      return null;
    case 'personal_sign': {
      const [message, address] = params as [Hex, string];
      if (address.toLowerCase() !== account.address.toLowerCase()) throw new Error('personal_sign for another address');
      return account.signMessage({ message: { raw: message } });
    }
    case 'eth_signTypedData_v4': {
      const [address, json] = params as [string, string];
      if (address.toLowerCase() !== account.address.toLowerCase()) throw new Error('eth_signTypedData_v4 for another address');
      const { domain, types, primaryType, message } = JSON.parse(json);
      const { EIP712Domain: _, ...rest } = types;
      return account.signTypedData({ domain, types: rest, primaryType, message });
    }
    default:
      return undefined;
  }
}

/**
 * A desktop page on `baseURL` with `account` injected as the test wallet on `chainId`, and the
 * page errors it collects.
 */
export async function walletPage(browser: Browser, baseURL: string, account: LocalAccount, chainId: number) {
  const context = await newContext(browser, 'desktop', baseURL);
  const wallet = await injectWallet(context, account, chainId);
  const page = await context.newPage();
  return { context, wallet, page, errors: pageErrors(page) };
}
