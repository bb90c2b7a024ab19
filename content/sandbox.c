/* Render worker confinement; see sandbox.h. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>

#include "log.h"
#include "sandbox.h"

/* Calls allowed without looking at their arguments. */
static const int allowed[] = {
	SCMP_SYS(read),
	SCMP_SYS(readv),
	SCMP_SYS(pread64),
	SCMP_SYS(write),
	SCMP_SYS(writev),
	SCMP_SYS(sendto),
	SCMP_SYS(sendmsg),
	SCMP_SYS(recvfrom),
	SCMP_SYS(recvmsg),
	SCMP_SYS(poll),
	SCMP_SYS(ppoll),
	SCMP_SYS(close),
	SCMP_SYS(fstat),
	SCMP_SYS(newfstatat),
	SCMP_SYS(statx),
	SCMP_SYS(stat),
	SCMP_SYS(lstat),
	SCMP_SYS(lseek),
	SCMP_SYS(access),
	SCMP_SYS(faccessat),
	SCMP_SYS(faccessat2),
	SCMP_SYS(getdents64),
	SCMP_SYS(readlink),
	SCMP_SYS(readlinkat),
	SCMP_SYS(getcwd),
	SCMP_SYS(fcntl),
	SCMP_SYS(dup),
	SCMP_SYS(eventfd2),
	SCMP_SYS(pipe2),
	SCMP_SYS(mmap),
	SCMP_SYS(munmap),
	SCMP_SYS(mremap),
	SCMP_SYS(mprotect),
	SCMP_SYS(madvise),
	SCMP_SYS(brk),
	SCMP_SYS(membarrier),
	SCMP_SYS(futex),
	SCMP_SYS(set_robust_list),
	SCMP_SYS(get_robust_list),
	SCMP_SYS(rseq),
	SCMP_SYS(set_tid_address),
	SCMP_SYS(sched_yield),
	SCMP_SYS(sched_getaffinity),
	SCMP_SYS(rt_sigaction),
	SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(rt_sigreturn),
	SCMP_SYS(sigaltstack),
	SCMP_SYS(getpid),
	SCMP_SYS(gettid),
	SCMP_SYS(getuid),
	SCMP_SYS(geteuid),
	SCMP_SYS(getgid),
	SCMP_SYS(getegid),
	SCMP_SYS(getrandom),
	SCMP_SYS(clock_gettime),
	SCMP_SYS(clock_getres),
	SCMP_SYS(clock_nanosleep),
	SCMP_SYS(nanosleep),
	SCMP_SYS(gettimeofday),
	SCMP_SYS(uname),
	SCMP_SYS(sysinfo),
	SCMP_SYS(getrlimit),
	SCMP_SYS(prlimit64),
	SCMP_SYS(exit),
	SCMP_SYS(exit_group),
};

/* Opens without these flags only. */
#define OPEN_FORBIDDEN                                                     \
	(O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | O_TMPFILE | O_DIRECT | \
	 O_NOATIME)

int sandbox_enter(void)
{
	scmp_filter_ctx ctx;
	sigset_t none;
	int r = 0;

	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return log_error_errno(-errno, "cannot set no_new_privs: %m");

	ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return log_error_errno(-ENOMEM, "cannot create seccomp filter");
	for (size_t i = 0; i < ELEMENTSOF(allowed) && r == 0; i++)
		if (allowed[i] >= 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i],
					     0);
	/* read-only opens (fonts, gdk-pixbuf's loader modules) */
	if (r == 0)
		r = seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
			SCMP_A2(SCMP_CMP_MASKED_EQ, OPEN_FORBIDDEN, O_RDONLY));
	if (r == 0)
		r = seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
			SCMP_A1(SCMP_CMP_MASKED_EQ, OPEN_FORBIDDEN, O_RDONLY));
	/* threads of this process (librsvg's filters), never new processes */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD,
					     CLONE_THREAD));
	/* clone3's flags are behind a pointer: ENOSYS makes glibc use clone */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
				     SCMP_SYS(clone3), 0);
	/* abort() signals itself */
	if (r == 0)
		r = seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
			SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0)
		return log_error_errno(r, "cannot install seccomp filter: %m");
	return 0;
}
