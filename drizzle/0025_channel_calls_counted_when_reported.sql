-- A channel call now counts as a call when its record arrives (its payment at the claim): the
-- records still earned when this runs were not counted yet, so they are counted here, each on the
-- day it was reported.
UPDATE "skill_stats" SET "call_count" = "skill_stats"."call_count" + e."calls", "last_called_at" = greatest("skill_stats"."last_called_at", e."last")
FROM (SELECT "skill_id", count(*)::integer AS "calls", max("created_at") AS "last" FROM "channel_calls" WHERE "status" = 'earned' GROUP BY "skill_id") e
WHERE "skill_stats"."skill_id" = e."skill_id";--> statement-breakpoint
INSERT INTO "skill_daily" ("skill_id", "day", "views", "calls", "revenue")
SELECT "skill_id", ("created_at" AT TIME ZONE 'UTC')::date, 0, count(*)::integer, 0 FROM "channel_calls" WHERE "status" = 'earned' GROUP BY 1, 2
ON CONFLICT ("skill_id", "day") DO UPDATE SET "calls" = "skill_daily"."calls" + excluded."calls";
