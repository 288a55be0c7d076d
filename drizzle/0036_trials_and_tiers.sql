ALTER TABLE "skills" ADD COLUMN "trial" jsonb;--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "tiers" jsonb;--> statement-breakpoint
ALTER TABLE "skill_stats" ADD COLUMN "trial_call_count" integer DEFAULT 0 NOT NULL;