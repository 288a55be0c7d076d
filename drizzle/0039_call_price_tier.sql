ALTER TABLE "skill_calls" ADD COLUMN "tier_after" integer;--> statement-breakpoint
ALTER TABLE "channel_calls" ADD COLUMN "tier_after" integer;