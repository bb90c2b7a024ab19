/* The fs layer's fixture: the themes of fixture.h indexed, and the parts a
 * request reaches (content, synth, the tree under GTK's rules with "t" as
 * the default theme) in one struct request (request.h), as struct fs builds it
 * for a thread. Header only, for the test programs of the fs layer. */
#pragma once

#include "content.h"
#include "fixture.h"
#include "tree.h"

struct tree_fixture {
	struct fixture *f;
	struct content *content;
	struct synth *synth;
	struct generation gen;
	struct tree *tree;
	struct request x;
};

/* After fixture_themes() and `extra` (may be NULL) have written the base
 * directory; 0 or -1. */
static inline int tree_fixture_setup(struct tree_fixture *c,
				     void (*extra)(struct fixture *f))
{
	c->f = fixture_new();
	fixture_themes(c->f);
	if (extra)
		extra(c->f);
	if (fixture_index(c->f) < 0 ||
	    content_new(c->f->db_path, NULL, c->f->bases, 1, 5000, 1 << 20,
			&c->content) < 0 ||
	    synth_new(&c->gen, &c->synth) < 0 ||
	    tree_new("t", "--theme", LOOKUP_RULES_GTK, &c->tree) < 0)
		return -1;
	c->x = (struct request){ .db = c->f->db,
				 .l = c->f->l,
				 .content = c->content,
				 .synth = c->synth,
				 .generation = &c->gen };
	return content_reader_new(c->content, c->f->db, &c->x.blobs);
}

static inline void tree_fixture_teardown(struct tree_fixture *c)
{
	tree_free(c->tree);
	synth_free(c->synth);
	blob_reader_free(c->x.blobs);
	content_free(c->content);
	fixture_free(c->f);
}

/* Look `path` up from the root, one component at a time (each lookup adds
 * a kernel reference, as the kernel's would). */
static inline int tree_fixture_walk(struct tree_fixture *c, const char *path,
				    uint64_t *ret_ino, struct stat *ret_st,
				    double *ret_timeout)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);
	uint64_t ino = TREE_ROOT_INO;
	int r = 0;

	for (char **p = parts; *p && r >= 0; p++)
		r = tree_lookup(c->tree, &c->x, REQUEST_RENDER, ino, *p, &ino,
				ret_st, ret_timeout);
	*ret_ino = ino;
	return r;
}

/* What the kernel holds of the tree: nodes, and misses. */
static inline unsigned tree_fixture_nodes(struct tree *t)
{
	unsigned nodes, negatives;
	size_t bytes;

	tree_held(t, &nodes, &negatives, &bytes);
	return nodes;
}

static inline unsigned tree_fixture_negatives(struct tree *t)
{
	unsigned nodes, negatives;
	size_t bytes;

	tree_held(t, &nodes, &negatives, &bytes);
	return negatives;
}
