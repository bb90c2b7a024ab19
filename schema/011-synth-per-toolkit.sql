-- The synthesized files of one theme for each toolkit's rules side by
-- side (made_by names the rules): the shared layer holds GTK's, KDE's and
-- Qt's, so that a first login of any desktop reads its own from there.
CREATE TABLE synth_by_rules (
	theme TEXT NOT NULL,
	kind TEXT NOT NULL,
	generation INTEGER NOT NULL,
	made_by TEXT NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (theme, kind, made_by)
);
INSERT INTO synth_by_rules SELECT theme, kind, generation, made_by, data FROM synth;
DROP TABLE synth;
ALTER TABLE synth_by_rules RENAME TO synth;
