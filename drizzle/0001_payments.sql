CREATE TABLE "payment_authorizations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"network" text NOT NULL,
	"asset" text NOT NULL,
	"payer" text NOT NULL,
	"nonce" text NOT NULL,
	"payee" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"valid_after" numeric(78, 0) NOT NULL,
	"valid_before" numeric(78, 0) NOT NULL,
	"payload_hash" text NOT NULL,
	"signer_kind" text NOT NULL,
	"state" text NOT NULL,
	"reason" text,
	"tx_hash" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "payment_authorizations_state_check" CHECK ("payment_authorizations"."state" in ('verified', 'settling', 'settled', 'failed')),
	CONSTRAINT "payment_authorizations_signer_kind_check" CHECK ("payment_authorizations"."signer_kind" in ('ecdsa', 'erc1271'))
);
--> statement-breakpoint
CREATE TABLE "payment_receipts" (
	"tx_hash" text PRIMARY KEY NOT NULL,
	"authorization_id" uuid NOT NULL,
	"network" text NOT NULL,
	"asset" text NOT NULL,
	"payer" text NOT NULL,
	"payee" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"relayer" text NOT NULL,
	"relayer_nonce" bigint NOT NULL,
	"status" text NOT NULL,
	"block_number" bigint,
	"error" text,
	"submitted_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"finalized_at" timestamp with time zone,
	CONSTRAINT "payment_receipts_status_check" CHECK ("payment_receipts"."status" in ('pending', 'confirmed', 'reverted', 'dropped'))
);
--> statement-breakpoint
ALTER TABLE "payment_receipts" ADD CONSTRAINT "payment_receipts_authorization_id_payment_authorizations_id_fk" FOREIGN KEY ("authorization_id") REFERENCES "public"."payment_authorizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "payment_authorizations_single_use_key" ON "payment_authorizations" USING btree ("network","asset","payer","nonce");--> statement-breakpoint
CREATE INDEX "payment_authorizations_settling_idx" ON "payment_authorizations" USING btree ("valid_before") WHERE "payment_authorizations"."state" = 'settling';--> statement-breakpoint
CREATE INDEX "payment_receipts_pending_idx" ON "payment_receipts" USING btree ("submitted_at") WHERE "payment_receipts"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "payment_receipts_authorization_id_idx" ON "payment_receipts" USING btree ("authorization_id");