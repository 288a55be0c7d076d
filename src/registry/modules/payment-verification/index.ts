/**
 * Payments reported in usage and call records, verified against the chain before they count as
 * revenue or paid calls (see store.ts for the one place that counts them).
 */
export { createPaymentVerifier, type PaymentVerifier, type VerificationRound } from './verifier';
export { recordReportedPayment } from './report';
export { paymentAmount, paymentReason, paymentScheme, paymentStatus } from './status';
export { countRejectedPayments, listSkillPayments } from './listing';
export { nominatePayment, nominatePayments } from './store';
