/** Skills as other modules see them: listings read in pages and the price parser. */
export { listGroupSkills, listPublicSkillsOf } from './own';
export { DEFAULT_LIMIT, searchSkills } from './search';
export { priceToAtomic } from './validate';
export { selectSkills, toSkillView } from './view';
