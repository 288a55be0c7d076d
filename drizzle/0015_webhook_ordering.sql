ALTER TABLE "webhook_deliveries" ADD COLUMN "seq" bigserial NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "ordering_key" text;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_ordering_idx" ON "webhook_deliveries" USING btree ("endpoint_id","ordering_key","seq") WHERE "webhook_deliveries"."status" = 'pending';