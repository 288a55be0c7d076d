/** Users as other modules see them: finding or creating an account, and its public creator view. */
export { findOrCreateByProvider, findOrCreateByWallet, getUserById, toCreator, type User } from './service';
