-- The mount's synthesized files (index.theme, icon-theme.cache) and the
-- name lists behind them, per theme, as built from the index at
-- `generation` (meta 'generation', which every refresh that changes the
-- index moves on). Built by the mount's background thread when the index
-- changes, so that the first program after a mount reads them in one go
-- instead of waiting for them to be built; rows of another generation are
-- never served, nor rows `made_by` another build of the rules (another
-- iconfs version or synthesized-file format). Name lists are the names
-- joined by NUL bytes.
CREATE TABLE synth (
	theme TEXT NOT NULL,
	kind TEXT NOT NULL,
	generation INTEGER NOT NULL,
	made_by TEXT NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (theme, kind)
);
INSERT OR IGNORE INTO meta(key, value) VALUES ('generation', 0);
