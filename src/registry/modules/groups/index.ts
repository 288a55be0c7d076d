/** Groups as other modules (and the dev stack's seed) see them: creating and listing a creator's groups. */
export { createGroup, listGroups } from './service';
