/**
 * Users as other modules see them: the accounts (found or created at sign-in, by auth), their public
 * creator view and profile edits. A leaf: the profile routes live in the creators module.
 */
export {
  findOrCreateByProvider,
  findOrCreateByWallet,
  getCreatorByAddress,
  getUserById,
  toCreator,
  updateProfile,
  type User,
} from './service';
