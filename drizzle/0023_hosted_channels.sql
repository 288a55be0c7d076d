CREATE TABLE "hosted_channel_claims" (
	"receiver" text PRIMARY KEY NOT NULL,
	"lease_id" text NOT NULL,
	"lease_until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hosted_channels" (
	"channel_id" text PRIMARY KEY NOT NULL,
	"receiver" text NOT NULL,
	"state" jsonb,
	"charged_cumulative_amount" numeric(39, 0) DEFAULT '0' NOT NULL,
	"lease_id" text,
	"lease_until" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "hosted_channels_receiver" ON "hosted_channels" USING btree ("receiver");