-- Change notifications for the registry's read caches (src/registry/cache): every write that
-- changes what a skill listing shows, other than its counters, notifies channel market_changes
-- on commit. Payload: 'skill:<id>' for one skill, '*' for anything that may touch many listings.
-- Counters (skill_stats) do not notify: caches keep them at most their stated age.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
-- The skill's id is the column named by the trigger's argument.
CREATE FUNCTION market_notify_skill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('market_changes', 'skill:' || (to_jsonb(CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END) ->> TG_ARGV[0]));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION market_notify_all() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('market_changes', '*');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER skills_notify AFTER INSERT OR UPDATE OR DELETE ON skills FOR EACH ROW EXECUTE FUNCTION market_notify_skill('id');
--> statement-breakpoint
CREATE TRIGGER skill_group_members_notify AFTER INSERT OR DELETE ON skill_group_members FOR EACH ROW EXECUTE FUNCTION market_notify_skill('skill_id');
--> statement-breakpoint
CREATE TRIGGER skill_groups_notify AFTER UPDATE OR DELETE ON skill_groups FOR EACH STATEMENT EXECUTE FUNCTION market_notify_all();
--> statement-breakpoint
CREATE TRIGGER users_notify AFTER UPDATE OF wallet_address ON users FOR EACH STATEMENT EXECUTE FUNCTION market_notify_all();
--> statement-breakpoint
CREATE TRIGGER server_health_notify AFTER UPDATE ON server_health FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.down_since IS DISTINCT FROM NEW.down_since)
  EXECUTE FUNCTION market_notify_all();
