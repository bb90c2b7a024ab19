-- Bitmaps are scaled as GTK 3 scales them (gdk-pixbuf's bilinear filter,
-- where the hyperbolic one was used): a PNG or XPM rendered the old way
-- shows other pixels than GTK draws from the same file, so those renders
-- go (the table is a cache: each is rendered again on first use). A layer
-- or index of the old version is another version's, as for any migration.
DELETE FROM blob WHERE source NOT LIKE '%.svg';
