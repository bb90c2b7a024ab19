/* The node table inside struct tree, shared by the two halves of the tree:
 * tree.c (nodes: lookup, forget, attributes, names) and tree-inval.c (what
 * the kernel holds and must forget: invalidations, the default theme's
 * switch, evictions). Private to those two files. */
#pragma once

#include <glib.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "tree.h"

struct node {
	uint64_t ino;
	uint64_t nlookup; /* kernel references; tree.lock */
	uint64_t parent;  /* the directory it was looked up in */
	char *entry;	  /* its name there */
	enum tree_kind kind;
	const char *theme; /* interned: themes are few, nodes many */
	int size, scale;
	char *name; /* icon name of TREE_ICON / TREE_SVG */
	uint64_t hash; /* of its key (tree.c) */
	uint64_t used;	/* tree.clock at the last lookup/getattr/open */
	unsigned bytes; /* what the node costs, counted in tree.bytes */
	/* Files: what the last lookup resolved; tree.lock. */
	struct icon_content content;
	struct timespec mtime;
};

/* How far the nodes' memory swings around the bound: an eviction takes
 * them this far below it, the next is due this far above it. A thirty-second
 * of 9 MiB is about 600 nodes, a second of a busy program's lookups; a
 * wider swing is memory the daemon holds one moment and not the next
 * (bench M3's RssAnon moved by 1.4 MiB with a sixteenth each way). */
#define TREE_SLACK(bound) ((bound) / 32)

struct tree {
	pthread_mutex_t theme_lock;
	char *default_theme;  /* theme_lock */
	char *default_source; /* what chose it; theme_lock */
	enum lookup_rules rules;
	uid_t uid;
	gid_t gid;

	pthread_mutex_t lock;
	struct timespec refreshed; /* mtime of directories; lock */
	GHashTable *by_ino;	   /* uint64 → node; lock */
	GHashTable *by_key;	   /* the nodes, by their key (tree.c); lock */
	uint64_t clock;		   /* ticks on every use of a node; lock */
	size_t bytes;		   /* the nodes' memory; lock */
	/* eventfd, readable while the nodes are past the bound of the last
	 * eviction (`bound`) by TREE_SLACK (`pressed`) until the next
	 * eviction; lock */
	int pressure_fd;
	bool pressed;
	size_t bound;
	struct node root;
	/* Negative entries the kernel may hold, a set of "parent/entry"
	 * strings (the parent's ino in decimal), at most TREE_NEGATIVES_MAX;
	 * lock. */
	GHashTable *negatives;
};
