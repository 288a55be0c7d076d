CREATE TABLE "facilitator_resources" (
	"key" text PRIMARY KEY NOT NULL,
	"resource" text NOT NULL,
	"type" text NOT NULL,
	"accepts" jsonb NOT NULL,
	"description" text,
	"mime_type" text,
	"service_name" text,
	"tags" jsonb,
	"icon_url" text,
	"extensions" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "facilitator_resources_listing_idx" ON "facilitator_resources" USING btree ("created_at","key");