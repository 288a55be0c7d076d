CREATE TABLE "server_health" (
	"server_url" text PRIMARY KEY NOT NULL,
	"host" text NOT NULL,
	"status" text DEFAULT 'unknown' NOT NULL,
	"latency_ms" integer,
	"failures" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"last_checked_at" timestamp with time zone,
	"last_up_at" timestamp with time zone,
	"down_since" timestamp with time zone,
	"next_probe_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "server_url" text GENERATED ALWAYS AS (regexp_replace(endpoint, '/[^/?#]*([?#].*)?$', '')) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "server_health_next_probe_idx" ON "server_health" USING btree ("next_probe_at");--> statement-breakpoint
CREATE INDEX "skills_server_url_idx" ON "skills" USING btree ("server_url");