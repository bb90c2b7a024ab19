-- Rendered blobs that verify themselves and a layout that reads cheaply.
--
-- Every column a request reads sits before the data, so that reading them
-- never walks the data's overflow pages. `head_crc` is a CRC-32 over the key,
-- the source's stamp, status, judged, bytes and data_crc; `data_crc` is the
-- CRC-32 of the data. A row that fails either check is a miss: rendered
-- again and replaced, never served. A failure (status > 0) is only ever a
-- verdict on the source (it cannot be decoded or is over a limit), and
-- `judged` names the iconfs version that gave it: another version judges
-- again. Renders of the old layout carried no checksum: they are dropped
-- (the table is a cache; every entry can be rendered again).
DROP TABLE blob;
CREATE TABLE blob (
	id INTEGER PRIMARY KEY,
	source TEXT NOT NULL,
	px INTEGER NOT NULL,
	src_ino INTEGER NOT NULL,
	src_size INTEGER NOT NULL,
	src_mtime_ns INTEGER NOT NULL,
	status INTEGER NOT NULL,
	judged TEXT NOT NULL DEFAULT '',
	bytes INTEGER NOT NULL,
	data_crc INTEGER NOT NULL,
	head_crc INTEGER NOT NULL,
	used INTEGER NOT NULL,
	data BLOB
);
CREATE UNIQUE INDEX blob_key ON blob(source, px);
-- Eviction takes the least recently used rows; the running total of
-- bytes is summed from this index alone.
CREATE INDEX blob_used ON blob(used, bytes);
