/** Skills as other modules (and the dev stack) see them: listings read in pages, the price parser, a creator's edits. */
export { listGroupSkills, listOwnSkills, listPublicSkillsOf } from './own';
export { updateSkill } from './service';
export { type CountFloor, countablePrice } from './count-floor';
export { DEFAULT_LIMIT, searchSkills } from './search';
export { priceToAtomic } from './validate';
export { selectSkills, toSkillView } from './view';
export { listedWhere, notModerated } from './visibility';
