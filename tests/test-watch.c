/* The live-update watcher's start and stop: a start that fails (the index
 * cannot be opened) cleans up what it made and nothing else: standard
 * input, fd 0, stays open. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "content.h"
#include "fixture.h"
#include "test.h"
#include "tree.h"
#include "watch.h"

TEST(failed_start_keeps_fd0)
{
	struct fixture *f = fixture_new();
	struct content *c = NULL;
	struct synth *s = NULL;
	struct generation gen = { 0 };
	struct tree *t = NULL;
	struct watch *w = NULL;
	g_autofree char *missing =
		g_build_filename(f->dir, "no", "index", NULL);

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	if (fcntl(0, F_GETFD) < 0)
		ASSERT_EQ_INT(open("/dev/null", O_RDONLY), 0);
	ASSERT_EQ_INT(
		content_new(f->db_path, NULL, f->bases, 1, 5000, 1 << 20, &c),
		0);
	ASSERT_EQ_INT(synth_new(NULL, &s), 0);
	ASSERT_EQ_INT(tree_new("t", "--theme", LOOKUP_RULES_GTK, &t), 0);
	w = watch_new();
	ASSERT_TRUE(watch_start(w, NULL, t, c, s, &gen, missing, f->bases) < 0);
	watch_free(w);
	ASSERT_TRUE(fcntl(0, F_GETFD) >= 0);
	tree_free(t);
	synth_free(s);
	content_free(c);
	fixture_free(f);
}

TEST_MAIN(TEST_CASE(failed_start_keeps_fd0))
