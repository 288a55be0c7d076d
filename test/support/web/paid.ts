/**
 * Page tests of paid calls on a local chain: a payment stack (anvil, our token, our facilitator),
 * the web registry on that chain taking http endpoints, with a creator who has the group `tools`,
 * a browser, and serve() options for a skill server that registers itself there.
 *
 * @example
 * const web = await startPaidWeb();
 * const server = await serve(skills, selfRegisteringServeOptions(web, payee, await freePort()));
 */
import type { Browser } from 'playwright-core';
import type { Address } from 'viem';
import type { ServeOptions } from 'skill-market/creator';
import type { FacilitatorSettings } from '../../../src/facilitator';
import { type Creator, newCreator } from '../catalogue';
import { loopbackServeOptions, type PaymentStack, startPaymentStack } from '../skill-server';
import { launchBrowser } from './browser';
import { startWebRegistry, type WebRegistry } from './registry';

export interface PaidWeb {
  stack: PaymentStack;
  registry: WebRegistry;
  browser: Browser;
  creator: Creator;
  /** A fresh address on the chain that the creator has proven holding: skills may be paid to it. */
  payee(): Promise<Address>;
  /** Closes the browser, the registry and the stack. */
  close(): Promise<void>;
}

/** `facilitator`: its settings (e.g. receiver keys); `verifyPayments`: the registry checks payments and channels on chain. */
export async function startPaidWeb(
  options: { facilitator?: Partial<FacilitatorSettings>; verifyPayments?: boolean } = {},
): Promise<PaidWeb> {
  const [stack, browser] = await Promise.all([
    startPaymentStack(options.facilitator ? { facilitator: options.facilitator } : {}),
    launchBrowser(),
  ]);
  const registry = await startWebRegistry({
    env: {
      MARKET_NETWORK: stack.chain.network,
      MARKET_USDC_ADDRESS: stack.asset.address,
      MARKET_RPC_URL: stack.chain.rpcUrl,
      MARKET_ALLOW_HTTP_ENDPOINTS: 'true',
    },
    ...(options.verifyPayments ? { verifyPayments: true } : {}),
  });
  const creator = await newCreator(registry.request);
  await creator.group('tools');
  return {
    stack,
    registry,
    browser,
    creator,
    async payee() {
      const account = await stack.chain.createAccount();
      await creator.prove(account);
      return account.address;
    },
    async close() {
      await browser.close();
      await registry.close();
      await stack.close();
    },
  };
}

/** serve() options of a skill server on `port` paying `payee` that registers its skills with the creator's key (a failure throws); `extra` wins. */
export function selfRegisteringServeOptions(web: PaidWeb, payee: Address, port: number, extra: Partial<ServeOptions> = {}): ServeOptions {
  return loopbackServeOptions(web.stack.chain, web.stack.facilitatorUrl, payee, {
    port,
    register: { endpoint: `http://127.0.0.1:${port}`, onError: 'throw' },
    asset: web.stack.asset,
    apiKey: web.creator.key,
    apiUrl: web.registry.url,
    ...extra,
  });
}
