/** Analytics as other modules see it: the counters they add to, inside their own transaction. */
export { countPaidCall, countReview, createSkillStats } from './stats';
