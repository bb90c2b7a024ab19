-- Renders that travel: a layer built in an image and copied file by file
-- (rsync -a, cp -a, an OSTree checkout, a container layer) finds the same
-- bytes of every source under the same path, size and mtime, but other
-- inodes. `src_hash` is a hash of the source's bytes (the first 64 bits
-- of its SHA-256; 0 where it was not taken), which stands in for the
-- inode when only that changed (content/blob.h).
ALTER TABLE blob ADD COLUMN src_hash INTEGER NOT NULL DEFAULT 0;
