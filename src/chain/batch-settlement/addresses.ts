/**
 * Where the x402 batch-settlement contracts live: the same addresses on Base (and the other chains
 * the scheme is deployed on) and on our local chains, so clients that hard-code them (as @x402/evm
 * does, also inside every channel id) work unchanged. Their home is the SDK (skill-market/x402).
 */
export { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from 'skill-market/x402';
