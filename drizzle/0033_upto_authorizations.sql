CREATE TABLE "upto_authorizations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"network" text NOT NULL,
	"asset" text NOT NULL,
	"payer" text NOT NULL,
	"nonce" text NOT NULL,
	"payee" text NOT NULL,
	"facilitator" text NOT NULL,
	"max_amount" numeric(78, 0) NOT NULL,
	"deadline" numeric(78, 0) NOT NULL,
	"payload_hash" text NOT NULL,
	"state" text NOT NULL,
	"amount" numeric(78, 0),
	"reason" text,
	"tx_hash" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "upto_authorizations_state_check" CHECK ("upto_authorizations"."state" in ('verified', 'settling', 'settled', 'failed'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "upto_authorizations_single_use_key" ON "upto_authorizations" USING btree ("network","asset","payer","nonce");--> statement-breakpoint
CREATE INDEX "upto_authorizations_open_idx" ON "upto_authorizations" USING btree ("payer","asset") WHERE "upto_authorizations"."state" in ('verified', 'settling');