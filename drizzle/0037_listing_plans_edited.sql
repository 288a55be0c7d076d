ALTER TABLE "skills" ADD COLUMN "trial_edited_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "tiers_edited_at" timestamp with time zone;