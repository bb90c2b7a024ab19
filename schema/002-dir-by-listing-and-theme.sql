-- A name's files are found through their listings, and one listing can be
-- reached from many themes (Papirus-Dark/48x48 is Papirus/48x48): filter
-- by theme inside the index, and carry what the lookup reads, so that no
-- dir row has to be fetched.
DROP INDEX dir_listing;
CREATE INDEX dir_listing ON dir(listing_id, theme_id, kind, relpath,
				basedir_id, path);
