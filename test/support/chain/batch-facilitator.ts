/**
 * The x402 reference facilitator for `batch-settlement` and `exact` (x402Facilitator with @x402/evm
 * 2.27's facilitator schemes) over HTTP on a random port, relaying from `relayer`: what a reference
 * resource server (@x402/hono) settles channel payments through on the local chain. With
 * `authorizer` it signs claims and refunds for channels naming that account as their receiver
 * authorizer, and advertises it in `/supported` (`extra.receiverAuthorizer`).
 *
 * @example
 * const facilitator = startBatchFacilitator(chain, chain.accounts.relayer);
 * const resourceServer = new x402ResourceServer(facilitator.client).register(chain.network, serverScheme);
 */
import { x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as FacilitatorScheme } from '@x402/evm/batch-settlement/facilitator';
import { ExactEvmScheme as ExactFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { publicActions } from 'viem';
import type { LocalChain, TestAccount } from './anvil';
import { serveFacilitator } from './reference-facilitator';

export function startBatchFacilitator(chain: LocalChain, relayer: TestAccount, authorizer?: TestAccount) {
  const relayerClient = chain.walletClient(relayer).extend(publicActions);
  const signer = toFacilitatorEvmSigner({ ...relayerClient, address: relayer.address } as unknown as Parameters<
    typeof toFacilitatorEvmSigner
  >[0]);
  const facilitator = new x402Facilitator()
    .register(chain.network, new FacilitatorScheme(signer, authorizer as ConstructorParameters<typeof FacilitatorScheme>[1]))
    .register(chain.network, new ExactFacilitatorScheme(signer));
  return serveFacilitator(facilitator);
}
