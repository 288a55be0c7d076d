CREATE TABLE "channel_vouchers" (
	"channel_id" text PRIMARY KEY NOT NULL,
	"state" jsonb,
	"charged_cumulative_amount" numeric(39, 0) DEFAULT '0' NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
