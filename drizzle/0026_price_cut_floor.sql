ALTER TABLE "skills" ADD COLUMN "count_floor_atomic" bigint;--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "count_floor_until" timestamp with time zone;