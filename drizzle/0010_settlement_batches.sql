CREATE TABLE "payment_batches" (
	"tx_hash" text PRIMARY KEY NOT NULL,
	"network" text NOT NULL,
	"relayer" text NOT NULL,
	"relayer_nonce" bigint NOT NULL,
	"size" bigint NOT NULL,
	"status" text NOT NULL,
	"block_number" bigint,
	"gas_used" bigint,
	"error" text,
	"submitted_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"finalized_at" timestamp with time zone,
	CONSTRAINT "payment_batches_status_check" CHECK ("payment_batches"."status" in ('pending', 'confirmed', 'reverted', 'dropped'))
);
--> statement-breakpoint
ALTER TABLE "payment_authorizations" ADD COLUMN "batch_call" text;--> statement-breakpoint
CREATE INDEX "payment_batches_pending_idx" ON "payment_batches" USING btree ("submitted_at") WHERE "payment_batches"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "payment_authorizations_tx_hash_idx" ON "payment_authorizations" USING btree ("tx_hash") WHERE "payment_authorizations"."tx_hash" is not null;