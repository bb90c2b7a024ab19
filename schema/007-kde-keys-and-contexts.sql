-- What KDE reads of a theme besides the specification's keys: the
-- [Icon Theme] keys of its groups' sizes and colour scheme (kde_keys,
-- "KEY=VALUE" lines, rewritten into the synthesized index.theme under the
-- kde rules) and each directory's Context (KDE skips those it does not
-- know). Both come from index.theme, so every theme's file is read again
-- at the next refresh (which stats each theme's index.theme): its stamp is
-- forgotten.
ALTER TABLE theme ADD COLUMN kde_keys TEXT NOT NULL DEFAULT '';
ALTER TABLE subdir ADD COLUMN context TEXT NOT NULL DEFAULT '';
UPDATE theme SET index_ino = -1, index_mtime_ns = -1, index_size = -1;
