-- Review scores are stored on the 0-100 scale from now on (a star is 20 points): the stars stored so far, and their sums, move to it.
UPDATE "reviews" SET "score" = "score" * 20;
--> statement-breakpoint
UPDATE "skill_stats" SET "rating_sum" = "rating_sum" * 20;
