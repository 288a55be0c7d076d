ALTER TABLE "facilitator_resources" ADD COLUMN "live_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "facilitator_resources" ADD COLUMN "checked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "facilitator_resources" ADD COLUMN "failing_since" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "facilitator_resources_check_idx" ON "facilitator_resources" USING btree ("checked_at");