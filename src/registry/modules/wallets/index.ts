/** Wallets as other modules and the dev stack's seed see them: registering a wallet an account proves it owns, and the addresses an account has proven. */
export { hasProven, provenAddresses } from './proven';
export { registerWallet } from './service';
