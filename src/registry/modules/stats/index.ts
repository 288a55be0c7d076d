/**
 * A skill's counters (skill_stats, skill_daily) as the modules that count see them: each counts
 * inside its own transaction. A leaf: it imports no other module, so skills, payments, reviews and
 * analytics all build on it.
 */
export {
  countBuyer,
  countCalls,
  countClaimedCalls,
  countFavorite,
  countPaidCall,
  countReview,
  countTrialCalls,
  countView,
  createSkillStats,
  dayOf,
  setServiceQuality,
  uncountCalls,
} from './counters';
