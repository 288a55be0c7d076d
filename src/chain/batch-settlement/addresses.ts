/**
 * Where the x402 batch-settlement contracts live: the same addresses on Base (and the other chains
 * the scheme is deployed on) and on our local chains, so clients that hard-code them (as @x402/evm
 * does, also inside every channel id) work unchanged.
 */
export const BATCH_SETTLEMENT_ADDRESS = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';
export const ERC3009_DEPOSIT_COLLECTOR_ADDRESS = '0x4020806089470a89826cB9fB1f4059150b550004';
