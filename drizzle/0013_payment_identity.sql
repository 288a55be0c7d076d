DROP INDEX "skill_calls_payment_ref_key";--> statement-breakpoint
DROP INDEX "payment_verifications_tx_skill_key";--> statement-breakpoint
ALTER TABLE "skill_calls" ADD COLUMN "payment_nonce" text;--> statement-breakpoint
ALTER TABLE "wallets" ADD COLUMN "proven_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "payment_verifications" ADD COLUMN "nonce" text;--> statement-breakpoint
ALTER TABLE "payment_verifications" ADD COLUMN "log_index" integer;--> statement-breakpoint
CREATE UNIQUE INDEX "skill_calls_payment_key" ON "skill_calls" USING btree ("skill_id","payment_ref",coalesce("payment_nonce", ''));--> statement-breakpoint
CREATE UNIQUE INDEX "payment_verifications_report_key" ON "payment_verifications" USING btree ("skill_id","tx_hash",coalesce("nonce", ''));--> statement-breakpoint
CREATE UNIQUE INDEX "payment_verifications_transfer_key" ON "payment_verifications" USING btree ("tx_hash","log_index");