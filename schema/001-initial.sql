-- iconfs index, version 1.
--
-- Base directories are identified by path and ordered by pos. Every directory
-- the indexer has looked at is a row of `dir` with a stamp (ino, mtime, ctime
-- in nanoseconds; -1 when it did not exist), so that a refresh stats and
-- compares instead of reading directories. Icons are (listing, name, ext)
-- with ext in the specification's order: 0 png, 1 svg, 2 xpm.

CREATE TABLE basedir (
	id INTEGER PRIMARY KEY,
	path TEXT NOT NULL UNIQUE,
	pos INTEGER NOT NULL,
	ino INTEGER NOT NULL DEFAULT -1,
	mtime_ns INTEGER NOT NULL DEFAULT -1,
	ctime_ns INTEGER NOT NULL DEFAULT -1
);

-- One row per directory name found in any base dir. index_path is the first
-- index.theme in base-dir order; valid says it parsed, which makes the row a
-- theme. A broken file keeps its stamp so that it is not reparsed until it
-- changes.
CREATE TABLE theme (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	index_path TEXT,
	index_ino INTEGER NOT NULL DEFAULT -1,
	index_mtime_ns INTEGER NOT NULL DEFAULT -1,
	index_size INTEGER NOT NULL DEFAULT -1,
	display_name TEXT,
	comment TEXT,
	example TEXT,
	inherits TEXT NOT NULL DEFAULT '',
	hidden INTEGER NOT NULL DEFAULT 0,
	valid INTEGER NOT NULL DEFAULT 0
);

-- The theme's subdirectory list: Directories then ScaledDirectories, in file
-- order. type: 0 Fixed, 1 Scalable, 2 Threshold.
CREATE TABLE subdir (
	theme_id INTEGER NOT NULL REFERENCES theme(id) ON DELETE CASCADE,
	pos INTEGER NOT NULL,
	path TEXT NOT NULL,
	size INTEGER NOT NULL,
	scale INTEGER NOT NULL,
	type INTEGER NOT NULL,
	min_size INTEGER NOT NULL,
	max_size INTEGER NOT NULL,
	threshold INTEGER NOT NULL,
	PRIMARY KEY (theme_id, path)
) WITHOUT ROWID;

-- The contents of one real directory, shared by every path that reaches it
-- (Papirus-Dark/48x48 is a symlink to Papirus/48x48, 16x16@2x to 16x16).
-- Keyed by device and inode; read again when its stamp changes.
CREATE TABLE listing (
	id INTEGER PRIMARY KEY,
	dev INTEGER NOT NULL,
	ino INTEGER NOT NULL,
	mtime_ns INTEGER NOT NULL,
	ctime_ns INTEGER NOT NULL,
	UNIQUE (dev, ino)
);

-- kind: 0 a base dir itself (unthemed fallback icons), 1 a theme root,
-- 2 a theme subdirectory (relpath names it). listing_id is NULL while the
-- directory does not exist.
CREATE TABLE dir (
	id INTEGER PRIMARY KEY,
	basedir_id INTEGER NOT NULL REFERENCES basedir(id) ON DELETE CASCADE,
	theme_id INTEGER REFERENCES theme(id) ON DELETE CASCADE,
	kind INTEGER NOT NULL,
	relpath TEXT NOT NULL DEFAULT '',
	path TEXT NOT NULL UNIQUE,
	listing_id INTEGER REFERENCES listing(id) ON DELETE SET NULL,
	ino INTEGER NOT NULL DEFAULT -1,
	mtime_ns INTEGER NOT NULL DEFAULT -1,
	ctime_ns INTEGER NOT NULL DEFAULT -1
);
CREATE INDEX dir_theme ON dir(theme_id, kind, relpath);
CREATE INDEX dir_basedir ON dir(basedir_id, kind);
CREATE INDEX dir_listing ON dir(listing_id);

CREATE TABLE icon (
	name TEXT NOT NULL,
	listing_id INTEGER NOT NULL REFERENCES listing(id) ON DELETE CASCADE,
	ext INTEGER NOT NULL,
	PRIMARY KEY (name, listing_id, ext)
) WITHOUT ROWID;
CREATE INDEX icon_listing ON icon(listing_id);

-- Rendered PNGs, keyed by the source's real path and the pixel size, valid
-- while the source's stamp is unchanged. status 0 holds data; a positive
-- status is the errno a failed render gave, remembered until the source
-- changes. used is the last use in unix seconds, kept coarse.
CREATE TABLE blob (
	source TEXT NOT NULL,
	px INTEGER NOT NULL,
	src_ino INTEGER NOT NULL,
	src_size INTEGER NOT NULL,
	src_mtime_ns INTEGER NOT NULL,
	status INTEGER NOT NULL,
	data BLOB,
	bytes INTEGER NOT NULL,
	used INTEGER NOT NULL,
	PRIMARY KEY (source, px)
) WITHOUT ROWID;
CREATE INDEX blob_used ON blob(used);

CREATE TABLE meta (
	key TEXT PRIMARY KEY,
	value
) WITHOUT ROWID;
