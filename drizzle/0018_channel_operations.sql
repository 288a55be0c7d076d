CREATE TABLE "channel_operations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"key" text NOT NULL,
	"network" text NOT NULL,
	"kind" text NOT NULL,
	"target" text NOT NULL,
	"call_data" text NOT NULL,
	"state" text NOT NULL,
	"tx_hash" text,
	"relayer" text,
	"relayer_nonce" bigint,
	"block_number" bigint,
	"error" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "channel_operations_key_unique" UNIQUE("key"),
	CONSTRAINT "channel_operations_state_check" CHECK ("channel_operations"."state" in ('queued', 'sent', 'confirmed', 'reverted', 'failed')),
	CONSTRAINT "channel_operations_kind_check" CHECK ("channel_operations"."kind" in ('deposit', 'claim', 'settle', 'refund'))
);
--> statement-breakpoint
CREATE INDEX "channel_operations_open_idx" ON "channel_operations" USING btree ("created_at") WHERE "channel_operations"."state" in ('queued', 'sent');--> statement-breakpoint
CREATE INDEX "channel_operations_tx_hash_idx" ON "channel_operations" USING btree ("tx_hash");