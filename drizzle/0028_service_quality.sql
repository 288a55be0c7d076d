ALTER TABLE "skill_stats" ADD COLUMN "service_quality" integer DEFAULT 500 NOT NULL;--> statement-breakpoint
ALTER TABLE "skill_stats" DROP COLUMN "popularity";--> statement-breakpoint
ALTER TABLE "skill_stats" ADD COLUMN "popularity" bigint GENERATED ALWAYS AS (((2 * buyer_count::bigint + repeat_buyer_count) * service_quality) * 524288 + least(paid_call_count, 524287)) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "skill_stats_popularity_idx" ON "skill_stats" USING btree ("popularity");--> statement-breakpoint
ALTER TABLE "server_health" ADD COLUMN "uptime_ppm" integer;--> statement-breakpoint
ALTER TABLE "server_health" ADD COLUMN "recent_success_ppm" integer;--> statement-breakpoint
ALTER TABLE "server_health" ADD COLUMN "latency_avg_ms" integer;
