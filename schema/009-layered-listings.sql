-- A user's index layered over the machine's (indexer/layered.h): it holds
-- the machine's directories, listings and themes (small), but not their
-- icons, which stay in the machine's index. `below` marks a listing whose
-- icons are those of the machine's listing of the same directory with the
-- same stamp; a listing read again is the index's own (below = 0) and its
-- icons are rows of this file, as in an index that is not layered.
ALTER TABLE listing ADD COLUMN below INTEGER NOT NULL DEFAULT 0;
