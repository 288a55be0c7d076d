/** Wallets as the dev stack's seed sees them: registering a wallet an account proves it owns. */
export { registerWallet } from './service';
