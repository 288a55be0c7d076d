/** Groups as other modules see them: resolving the groups a creator files a skill under. */
export { resolveOwnedGroups } from './service';
