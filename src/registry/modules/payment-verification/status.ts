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

/** Why the check of a record's payment rejected it (or is still pending): null without one. */
export function paymentReason(paymentId: AnyColumn): SQL<string | null> {
  return sql<
    string | null
  >`(select ${paymentVerifications.reason} from ${paymentVerifications} where ${paymentVerifications.id} = ${paymentId} and ${paymentVerifications.status} <> 'verified')`;
}

/** How a record's payment was paid, as its check found on chain: null before it is verified (or without one). */
export function paymentScheme(paymentId: AnyColumn): SQL<'exact' | 'upto' | null> {
  return sql<
    'exact' | 'upto' | null
  >`(select ${paymentVerifications.scheme} from ${paymentVerifications} where ${paymentVerifications.id} = ${paymentId} and ${paymentVerifications.status} = 'verified')`;
}

/** What the chain shows a record's payment moved (atomic units, as text): null before it is verified (or without one). */
export function paymentAmount(paymentId: AnyColumn): SQL<string | null> {
  return sql<
    string | null
  >`(select ${paymentVerifications.amount}::text from ${paymentVerifications} where ${paymentVerifications.id} = ${paymentId} and ${paymentVerifications.status} = 'verified')`;
}
