CREATE TABLE "moderation_actions" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"operator_id" uuid NOT NULL,
	"operator_address" text NOT NULL,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" uuid NOT NULL,
	"target_label" text NOT NULL,
	"reason" text NOT NULL,
	"report_id" uuid,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reports" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"reporter_id" uuid NOT NULL,
	"skill_id" uuid,
	"creator_id" uuid NOT NULL,
	"category" text NOT NULL,
	"text" text NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "suspended_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "suspended_reason" text;--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "hidden_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "hidden_reason" text;--> statement-breakpoint
ALTER TABLE "reports" ADD CONSTRAINT "reports_reporter_id_users_id_fk" FOREIGN KEY ("reporter_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reports" ADD CONSTRAINT "reports_skill_id_skills_id_fk" FOREIGN KEY ("skill_id") REFERENCES "public"."skills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reports" ADD CONSTRAINT "reports_creator_id_users_id_fk" FOREIGN KEY ("creator_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "moderation_actions_target_idx" ON "moderation_actions" USING btree ("target_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "reports_open_skill_key" ON "reports" USING btree ("reporter_id","skill_id") WHERE status = 'open' and skill_id is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "reports_open_creator_key" ON "reports" USING btree ("reporter_id","creator_id") WHERE status = 'open' and skill_id is null;--> statement-breakpoint
CREATE INDEX "reports_status_idx" ON "reports" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "reports_reporter_idx" ON "reports" USING btree ("reporter_id","created_at");--> statement-breakpoint
-- The audit log is append-only: whoever connects, an entry is never changed or removed.
CREATE FUNCTION moderation_actions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'moderation_actions is append-only: % refused', TG_OP;
END $$;
--> statement-breakpoint
CREATE TRIGGER moderation_actions_no_update BEFORE UPDATE OR DELETE ON moderation_actions FOR EACH ROW EXECUTE FUNCTION moderation_actions_append_only();
--> statement-breakpoint
CREATE TRIGGER moderation_actions_no_truncate BEFORE TRUNCATE ON moderation_actions FOR EACH STATEMENT EXECUTE FUNCTION moderation_actions_append_only();
--> statement-breakpoint
-- A suspension hides every skill of the account: the read caches drop their listings (0007).
CREATE TRIGGER users_suspension_notify AFTER UPDATE OF suspended_at ON users FOR EACH STATEMENT EXECUTE FUNCTION market_notify_all();
