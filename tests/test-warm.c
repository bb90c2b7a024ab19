/* The working set (warm.h): the files noted are stored in the index at
 * warm_stop(), each once, with the time of its first note and the default
 * theme then, at most
 * WARM_FILES of them, the most recent kept; and the read ahead's process
 * (helper_read_ahead_main, run here in a child on a plain directory)
 * reads each path it is given below its directory, never outside it nor
 * through a link, and answers 0 or the errno. The read ahead itself, which starts
 * this program again, is left to the system tests: the index here holds
 * no row when the working set starts. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "test.h"
#include "helper.h"
#include "warm.h"

static long long count_of(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q = NULL;
	long long n = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

/* Start the working set on f's index, and wait for its read ahead to find
 * nothing to read. */
static int start(struct fixture *f, struct warm **ret)
{
	bool done = false;
	int r = warm_start(f->db_path, f->dir, "hicolor", NULL, NULL, ret);

	for (int i = 0; r >= 0 && !done && i < 500; i++) {
		if (warm_read_ahead(*ret, &done) != 0)
			return -1;
		if (!done)
			g_usleep(10 * 1000);
	}
	return r < 0 ? r : done ? 0 : -1;
}

TEST(notes_stored)
{
	struct fixture *f = fixture_new();
	struct warm *w = NULL;
	long long before = g_get_real_time() / 1000;

	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(start(f, &w), 0);
	/* no real thread is the read ahead's before it runs */
	ASSERT_TRUE(!warm_is_reader(w, getpid()));
	ASSERT_TRUE(!warm_is_reader(NULL, getpid()));
	warm_note(w, "icons/t/16x16/a.png");
	warm_note(w, "48/c.png");
	/* each with the default theme of its first read */
	warm_set_theme(w, "other");
	warm_note(w, "icons/t/16x16/a.png");
	warm_note(w, "icons/u/16x16/b.png");
	warm_set_theme(NULL, "other");
	warm_stop(w);
	ASSERT_EQ_INT(count_of(f->db, "SELECT count(*) FROM warm"), 3);
	ASSERT_EQ_INT(count_of(f->db, "SELECT count(*) FROM warm WHERE path = "
				      "'icons/t/16x16/a.png'"),
		      1);
	ASSERT_EQ_INT(count_of(f->db, "SELECT count(*) FROM warm WHERE theme = "
				      "'hicolor' AND path IN "
				      "('icons/t/16x16/a.png', '48/c.png')"),
		      2);
	ASSERT_EQ_INT(count_of(f->db, "SELECT count(*) FROM warm WHERE theme = "
				      "'other' AND path = 'icons/u/16x16/b.png'"),
		      1);
	ASSERT_TRUE(count_of(f->db, "SELECT min(used) FROM warm") >= before);
	ASSERT_TRUE(count_of(f->db, "SELECT max(used) FROM warm") <=
		    g_get_real_time() / 1000);
	fixture_free(f);
}

TEST(bounded)
{
	struct fixture *f = fixture_new();
	struct warm *w = NULL;
	char path[64];

	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(start(f, &w), 0);
	/* remembered from earlier sessions, long ago: after the read ahead,
	 * which found the table empty */
	ASSERT_EQ_INT(db_exec(f->db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION "
				     "ALL SELECT i + 1 FROM n WHERE i < 100) "
				     "INSERT INTO warm (path, used) SELECT "
				     "'old/' || i, i FROM n"),
		      0);
	/* more notes than are kept */
	for (int i = 0; i < WARM_FILES + 10; i++) {
		(void)snprintf(path, sizeof(path), "new/%d.png", i);
		warm_note(w, path);
	}
	warm_stop(w);
	/* the most recent WARM_FILES: the new ones */
	ASSERT_EQ_INT(count_of(f->db, "SELECT count(*) FROM warm"), WARM_FILES);
	ASSERT_EQ_INT(count_of(f->db, "SELECT count(*) FROM warm WHERE path "
				      "LIKE 'old/%'"),
		      0);
	fixture_free(f);
}

struct reader {
	pid_t pid;
	int in;	   /* its stdin */
	FILE *out; /* its stdout */
};

/* The memory of `f` (no index open), leaving its files: in a child before
 * it exits, as valgrind would have it. */
static void forget(struct fixture *f)
{
	g_free(f->dir);
	g_free(f->base);
	g_free(f->db_path);
	g_free(f);
}

/* helper_read_ahead_main() on f's base directory in a child. */
static int reader_start(struct fixture *f, struct reader *ret)
{
	int to[2], from[2];

	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		return -1;
	fflush(stdout);
	ret->pid = fork();
	if (ret->pid == 0) {
		int r;

		(void)dup2(to[0], STDIN_FILENO);
		(void)dup2(from[1], STDOUT_FILENO);
		(void)close(to[1]); /* its input ends when the test's does */
		(void)close(from[0]);
		r = helper_read_ahead_main(f->base);
		forget(f);
		_exit(r);
	}
	(void)close(to[0]);
	(void)close(from[1]);
	ret->in = to[1];
	ret->out = fdopen(from[0], "r");
	return ret->pid > 0 && ret->out ? 0 : -1;
}

/* The reader's answer for `path`: 0 or an errno; -1 for none. */
static int ask(struct reader *rd, const char *path)
{
	char line[64];

	if (dprintf(rd->in, "%s\n", path) < 0 ||
	    !fgets(line, sizeof(line), rd->out))
		return -1;
	return atoi(line);
}

TEST(reader)
{
	struct fixture *f = fixture_new();
	char outside[PATH_MAX], link[PATH_MAX];
	struct reader rd = { 0 };
	int status = -1;

	(void)snprintf(outside, sizeof(outside), "%s/secret", f->dir);
	(void)snprintf(link, sizeof(link), "%s/link", f->base);
	fixture_write(f, "a.png", "png", -1);
	fixture_write(f, "sub/b.png", "png", -1);
	ASSERT_TRUE(g_file_set_contents(outside, "no", -1, NULL));
	ASSERT_EQ_INT(symlink("a.png", link), 0);
	/* nothing allocated from here to the fork but what it frees */
	ASSERT_EQ_INT(reader_start(f, &rd), 0);
	ASSERT_EQ_INT(ask(&rd, "a.png"), 0);
	ASSERT_EQ_INT(ask(&rd, "sub/b.png"), 0);
	ASSERT_EQ_INT(ask(&rd, "missing.png"), ENOENT);
	/* nothing outside the directory, nothing through a link */
	ASSERT_EQ_INT(ask(&rd, "../secret"), EINVAL);
	ASSERT_EQ_INT(ask(&rd, "sub/../../secret"), EINVAL);
	ASSERT_EQ_INT(ask(&rd, outside), EINVAL);
	ASSERT_EQ_INT(ask(&rd, "sub//b.png"), EINVAL);
	ASSERT_EQ_INT(ask(&rd, "./a.png"), EINVAL);
	ASSERT_EQ_INT(ask(&rd, "link"), ELOOP);
	/* its input ends: it exits 0 */
	(void)close(rd.in);
	ASSERT_EQ_INT(waitpid(rd.pid, &status, 0), rd.pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ_INT(WEXITSTATUS(status), 0);
	(void)fclose(rd.out);
	fixture_free(f);
}

TEST_MAIN(TEST_CASE(notes_stored), TEST_CASE(bounded), TEST_CASE(reader))
