ALTER TABLE "skill_calls" ALTER COLUMN "amount" SET DATA TYPE numeric(78, 0);--> statement-breakpoint
ALTER TABLE "skill_daily" ALTER COLUMN "revenue" SET DATA TYPE numeric(78, 0);--> statement-breakpoint
ALTER TABLE "skill_daily" ALTER COLUMN "revenue" SET DEFAULT 0;--> statement-breakpoint
ALTER TABLE "skill_stats" ALTER COLUMN "total_revenue" SET DATA TYPE numeric(78, 0);--> statement-breakpoint
ALTER TABLE "skill_stats" ALTER COLUMN "total_revenue" SET DEFAULT 0;--> statement-breakpoint
ALTER TABLE "usage_records" ALTER COLUMN "amount" SET DATA TYPE numeric(78, 0);--> statement-breakpoint
ALTER TABLE "payment_verifications" ALTER COLUMN "expected_amount" SET DATA TYPE numeric(78, 0);--> statement-breakpoint
ALTER TABLE "payment_verifications" ALTER COLUMN "amount" SET DATA TYPE numeric(78, 0);--> statement-breakpoint
ALTER TABLE "channel_calls" ALTER COLUMN "cumulative" SET DATA TYPE numeric(78, 0);--> statement-breakpoint
ALTER TABLE "channel_calls" ALTER COLUMN "amount" SET DATA TYPE numeric(78, 0);--> statement-breakpoint
ALTER TABLE "payment_channels" ALTER COLUMN "balance" SET DATA TYPE numeric(78, 0);--> statement-breakpoint
ALTER TABLE "payment_channels" ALTER COLUMN "total_claimed" SET DATA TYPE numeric(78, 0);--> statement-breakpoint
ALTER TABLE "payment_channels" ALTER COLUMN "total_claimed" SET DEFAULT 0;--> statement-breakpoint
ALTER TABLE "payment_channels" ALTER COLUMN "settled_claimed" SET DATA TYPE numeric(78, 0);--> statement-breakpoint
ALTER TABLE "payment_channels" ALTER COLUMN "settled_claimed" SET DEFAULT 0;