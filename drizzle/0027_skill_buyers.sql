CREATE TABLE "skill_buyers" (
	"skill_id" uuid NOT NULL,
	"payer" text NOT NULL,
	"paid_calls" integer NOT NULL,
	CONSTRAINT "skill_buyers_skill_id_payer_pk" PRIMARY KEY("skill_id","payer")
);
--> statement-breakpoint
ALTER TABLE "skill_stats" ADD COLUMN "buyer_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "skill_stats" ADD COLUMN "repeat_buyer_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "skill_stats" ADD COLUMN "popularity" bigint GENERATED ALWAYS AS (buyer_count::bigint * 4294967296 + paid_call_count) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "skill_buyers" ADD CONSTRAINT "skill_buyers_skill_id_skills_id_fk" FOREIGN KEY ("skill_id") REFERENCES "public"."skills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "skill_stats_popularity_idx" ON "skill_stats" USING btree ("popularity");--> statement-breakpoint
INSERT INTO "skill_buyers" ("skill_id", "payer", "paid_calls")
SELECT "skill_id", "payer", sum("calls")::integer FROM (
  SELECT "skill_id", lower("payer") AS "payer", count(*) AS "calls" FROM "payment_verifications"
    WHERE "status" = 'verified' AND "log_index" IS NOT NULL AND "payer" IS NOT NULL GROUP BY 1, 2
  UNION ALL
  SELECT c."skill_id", lower(p."payer") AS "payer", count(*) AS "calls" FROM "channel_calls" c
    JOIN "payment_channels" p ON p."channel_id" = c."channel_id"
    WHERE c."status" = 'counted' AND p."payer" IS NOT NULL GROUP BY 1, 2
) AS "paid" GROUP BY 1, 2;--> statement-breakpoint
UPDATE "skill_stats" s SET
  "buyer_count" = (SELECT count(*) FROM "skill_buyers" b WHERE b."skill_id" = s."skill_id"),
  "repeat_buyer_count" = (SELECT count(*) FROM "skill_buyers" b WHERE b."skill_id" = s."skill_id" AND b."paid_calls" > 1);
