/**
 * Moderation: reports from signed-in accounts, and the operators' (OPERATOR_ADDRESSES) queue,
 * decisions (hide a skill, suspend a creator, undo either) and append-only audit log. What a
 * decision hides is read by the skills module's visibility conditions and the auth module's
 * suspension check, from the columns this module writes; neither imports this one.
 */
export { moderationRoutes } from './routes';
