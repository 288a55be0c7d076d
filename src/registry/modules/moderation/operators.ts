import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';

/** Whether `walletAddress` (EIP-55, as sessions carry it) is one of OPERATOR_ADDRESSES. */
export const isOperator = (ctx: ServiceContext, walletAddress: string): boolean => ctx.config.moderation.operators.includes(walletAddress);

/** The operator acting, or 403 for anyone else. */
export function requireOperator(ctx: ServiceContext, principal: { userId: string; walletAddress: string }): Operator {
  if (!isOperator(ctx, principal.walletAddress)) throw new AppError('FORBIDDEN', 'Only the marketplace’s operators can do this');
  return { id: principal.userId, address: principal.walletAddress };
}

/** Who acts, as the audit log records them. */
export interface Operator {
  id: string;
  address: string;
}

/** A reason as stored: trimmed, and not empty. */
export function reasonOf(raw: string): string {
  const reason = raw.trim();
  if (reason === '') throw new AppError('VALIDATION', 'Invalid request: field "reason": must say why');
  return reason;
}
