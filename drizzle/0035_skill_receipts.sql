ALTER TABLE "skills" ADD COLUMN "receipt_signer" text;--> statement-breakpoint
ALTER TABLE "skill_calls" ADD COLUMN "receipt_amount" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "skill_calls" ADD COLUMN "receipt_check" text;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "receipt" jsonb;