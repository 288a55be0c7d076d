CREATE TABLE "channel_calls" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"skill_id" uuid NOT NULL,
	"channel_id" text NOT NULL,
	"cumulative" bigint NOT NULL,
	"amount" bigint NOT NULL,
	"status" text DEFAULT 'earned' NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone NOT NULL,
	"decided_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "payment_channels" (
	"channel_id" text PRIMARY KEY NOT NULL,
	"network" text NOT NULL,
	"payer" text,
	"receiver" text,
	"token" text,
	"balance" bigint,
	"total_claimed" bigint DEFAULT 0 NOT NULL,
	"settled_claimed" bigint DEFAULT 0 NOT NULL,
	"status" text DEFAULT 'watching' NOT NULL,
	"reason" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"checked_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "channel_calls" ADD CONSTRAINT "channel_calls_skill_id_skills_id_fk" FOREIGN KEY ("skill_id") REFERENCES "public"."skills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "channel_calls" ADD CONSTRAINT "channel_calls_channel_id_payment_channels_channel_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."payment_channels"("channel_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "channel_calls_cumulative_key" ON "channel_calls" USING btree ("channel_id","cumulative","skill_id");--> statement-breakpoint
CREATE INDEX "channel_calls_skill_idx" ON "channel_calls" USING btree ("skill_id","created_at");--> statement-breakpoint
CREATE INDEX "payment_channels_due_idx" ON "payment_channels" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "payment_channels_payer_idx" ON "payment_channels" USING btree ("payer");