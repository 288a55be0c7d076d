ALTER TABLE "usage_records" ADD COLUMN "channel_id" text;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "cumulative" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "deposit_transaction" text;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "deposit_amount" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "channel_calls" ADD COLUMN "voucher_digest" text;--> statement-breakpoint
ALTER TABLE "payment_channels" ADD COLUMN "withdraw_amount" numeric(78, 0) DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "payment_channels" ADD COLUMN "withdraw_initiated_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "usage_records_channel_key" ON "usage_records" USING btree ("user_id","skill_id","channel_id","cumulative");--> statement-breakpoint
CREATE INDEX "channel_calls_voucher_idx" ON "channel_calls" USING btree ("skill_id","voucher_digest");