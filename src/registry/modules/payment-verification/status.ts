import { sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { paymentVerifications } from '../../../db/schema';

export type PaymentStatus = 'none' | 'pending' | 'verified' | 'rejected';

/**
 * The verification state of a record's payment, for histories: `select({ …, payment:
 * paymentStatus(usageRecords.paymentId) })` gives `none` (no reference), `pending`, `verified` or
 * `rejected`.
 */
export function paymentStatus(paymentId: AnyColumn): SQL<PaymentStatus> {
  return sql<PaymentStatus>`coalesce((select ${paymentVerifications.status} from ${paymentVerifications} where ${paymentVerifications.id} = ${paymentId}), 'none')`;
}
