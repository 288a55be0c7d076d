CREATE TABLE "payment_verifications" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"skill_id" uuid NOT NULL,
	"tx_hash" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"reason" text,
	"expected_amount" bigint NOT NULL,
	"pay_to" text NOT NULL,
	"network" text NOT NULL,
	"payer" text,
	"amount" bigint,
	"block_number" bigint,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"decided_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "skill_calls" ADD COLUMN "payment_id" uuid;--> statement-breakpoint
ALTER TABLE "skill_stats" ADD COLUMN "paid_call_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "payment_id" uuid;--> statement-breakpoint
ALTER TABLE "payment_verifications" ADD CONSTRAINT "payment_verifications_skill_id_skills_id_fk" FOREIGN KEY ("skill_id") REFERENCES "public"."skills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "payment_verifications_tx_skill_key" ON "payment_verifications" USING btree ("skill_id","tx_hash");--> statement-breakpoint
CREATE INDEX "payment_verifications_due_idx" ON "payment_verifications" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "payment_verifications_payer_idx" ON "payment_verifications" USING btree ("payer","created_at");--> statement-breakpoint
ALTER TABLE "skill_calls" ADD CONSTRAINT "skill_calls_payment_id_payment_verifications_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payment_verifications"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_records" ADD CONSTRAINT "usage_records_payment_id_payment_verifications_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payment_verifications"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "skill_stats_paid_calls_idx" ON "skill_stats" USING btree ("paid_call_count");--> statement-breakpoint
-- Counts recorded before payments were verified are not trusted: every recorded transaction
-- reference is queued for an on-chain check (and counts again once verified), revenue and paid
-- calls restart from verified payments, and only calls without a reference stay counted as calls.
INSERT INTO "payment_verifications" ("skill_id", "tx_hash", "expected_amount", "pay_to", "network", "next_attempt_at", "created_at")
SELECT r."skill_id", lower(r."payment_ref"), s."price_atomic", s."payment_address", s."network", now(), min(r."created_at")
FROM (
  SELECT "skill_id", "payment_ref", "created_at" FROM "usage_records" WHERE "payment_ref" ~ '^0x[0-9a-fA-F]{64}$'
  UNION ALL
  SELECT "skill_id", "payment_ref", "created_at" FROM "skill_calls" WHERE "payment_ref" ~ '^0x[0-9a-fA-F]{64}$'
) r JOIN "skills" s ON s."id" = r."skill_id"
GROUP BY r."skill_id", lower(r."payment_ref"), s."price_atomic", s."payment_address", s."network";--> statement-breakpoint
UPDATE "usage_records" u SET "payment_id" = v."id" FROM "payment_verifications" v WHERE v."skill_id" = u."skill_id" AND v."tx_hash" = lower(u."payment_ref");--> statement-breakpoint
UPDATE "skill_calls" c SET "payment_id" = v."id" FROM "payment_verifications" v WHERE v."skill_id" = c."skill_id" AND v."tx_hash" = lower(c."payment_ref");--> statement-breakpoint
UPDATE "skill_stats" st SET "total_revenue" = 0, "call_count" = (SELECT count(*) FROM "skill_calls" c WHERE c."skill_id" = st."skill_id" AND c."payment_ref" IS NULL);--> statement-breakpoint
UPDATE "skill_daily" d SET "revenue" = 0, "calls" = (SELECT count(*) FROM "skill_calls" c WHERE c."skill_id" = d."skill_id" AND c."payment_ref" IS NULL AND (c."created_at" AT TIME ZONE 'UTC')::date = d."day");
