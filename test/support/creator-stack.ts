/**
 * A creator ready to sell on a local chain: a payment stack (anvil, our facilitator, the EIP-3009
 * token), a creator of `fx`'s registry with a proven payee and the group `tools`, the registry
 * served over HTTP for skill servers and clients, and its payment checks against the chain.
 */
import type { Address } from 'viem';
import { PAYMENT_VERIFICATION_DEFAULTS } from '../../src/config';
import type { PaymentVerifier } from '../../src/registry/modules/payment-verification';
import { newCreator, type Creator } from './catalogue';
import { chainVerifier, type registryFixture } from './registry';
import { startPaymentStack, type PaymentStack } from './skill-server';

export interface CreatorStack {
  stack: PaymentStack;
  creator: Creator;
  /** An address the creator proved holding: skills may be paid to it. */
  payee: Address;
  /** The registry over HTTP. */
  apiUrl: string;
  /** Payment checks on, run by `verifyNow()`. */
  verifier: PaymentVerifier;
  /** Stops the HTTP front and the payment stack (stop skill servers first). */
  close(): Promise<void>;
}

/** `front` may wrap the registry's handler (e.g. to record what skill servers send it). */
export async function startCreatorStack(
  fx: ReturnType<typeof registryFixture>,
  front: (request: Request, registry: (request: Request) => Promise<Response>) => Promise<Response> = (request, registry) =>
    registry(request),
): Promise<CreatorStack> {
  const stack = await startPaymentStack();
  const payee = await stack.chain.createAccount();
  const creator = await newCreator(fx.request);
  await creator.prove(payee);
  await creator.group('tools');
  const registry = async (request: Request) => fx.registry.app.handle(request);
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => front(request, registry) });
  return {
    stack,
    creator,
    payee: payee.address,
    apiUrl: `http://127.0.0.1:${server.port}`,
    verifier: chainVerifier(fx, stack.chain, { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: true }),
    close: async () => {
      await server.stop(true);
      await stack.close();
    },
  };
}
