-- The working set (fs/warm.h): files of the mounted tree that the user's
-- programs read, as paths relative to the mount, with when a session
-- first read each (unix ms). A mount reads the most recent ones ahead at
-- start, in that order, before the login's programs ask for them.
CREATE TABLE warm (
	path TEXT PRIMARY KEY,
	used INTEGER NOT NULL
) WITHOUT ROWID;
