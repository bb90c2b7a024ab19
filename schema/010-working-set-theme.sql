-- The default theme of the session that read each file of the working set
-- (fs/warm.h): a mount reads ahead only what sessions of its own theme
-- setting read. NULL for a row stored before: read ahead whatever the
-- theme, as it was.
ALTER TABLE warm ADD COLUMN theme TEXT;
