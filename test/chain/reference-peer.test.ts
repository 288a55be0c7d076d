import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { type Address, type LocalAccount, publicActions } from 'viem';
import { type LocalChain, signAuthorization, startChain } from '../support/chain';

// The x402 reference facilitator, run against the fixture: proves the token is faithful enough
// for the reference stack, including its failure diagnosis (which needs Multicall3).
let chain: LocalChain;
let facilitator: x402Facilitator;
let requirements: PaymentRequirements;
beforeAll(async () => {
  chain = await startChain();
  const client = chain.walletClient(chain.accounts.relayer).extend(publicActions);
  facilitator = new x402Facilitator();
  // viem's verifyTypedData parameter type is a union the reference's structural signer type
  // does not accept, though the call works; hence the cast.
  const signerClient = { ...client, address: chain.accounts.relayer.address };
  registerExactEvmScheme(facilitator, {
    signer: toFacilitatorEvmSigner(signerClient as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]),
    networks: chain.network,
  });
  requirements = {
    scheme: 'exact',
    network: chain.network,
    amount: '10000',
    asset: chain.token.address,
    payTo: chain.accounts.payee.address,
    maxTimeoutSeconds: 60,
    extra: { name: chain.token.name, version: chain.token.version },
  };
});
afterAll(() => chain.stop());

async function payment(signer: LocalAccount, from?: Address): Promise<PaymentPayload> {
  const { authorization: a, signature } = await signAuthorization(chain, signer, {
    from,
    to: chain.accounts.payee.address,
    value: 10_000n,
  });
  const authorization = { ...a, value: `${a.value}`, validAfter: `${a.validAfter}`, validBefore: `${a.validBefore}` };
  return { x402Version: 2, accepted: requirements, payload: { signature, authorization } };
}

describe('x402 reference facilitator on the local chain', () => {
  it('verifies and settles an EOA payment, then reports its replay as nonce already used', async () => {
    const paid = await payment(chain.accounts.payer);
    expect((await facilitator.verify(paid, requirements)).isValid).toBe(true);
    const settled = await facilitator.settle(paid, requirements);
    expect(settled.success).toBe(true);
    expect(await chain.balanceOf(chain.accounts.payee.address)).toBe(10_000n);
    expect((await facilitator.verify(paid, requirements)).invalidReason).toBe('invalid_exact_evm_nonce_already_used');
  });

  it('settles an ERC-1271 smart wallet payment', async () => {
    const paid = await payment(chain.smartWallet.owner, chain.smartWallet.address);
    expect((await facilitator.settle(paid, requirements)).success).toBe(true);
  });

  it('reports an underfunded payer as insufficient balance', async () => {
    const poor = await chain.createAccount({ usdc: 1n });
    expect((await facilitator.verify(await payment(poor), requirements)).invalidReason).toBe('invalid_exact_evm_insufficient_balance');
  });
});
