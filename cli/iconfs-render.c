/* iconfs-render: the render worker program, started by the render pool of
 * the mount and of `iconfs render` (see content/worker.h); not a command
 * for people. */
#include "log.h"
#include "worker.h"

int main(void)
{
	/* the daemon in the background passes where it logs */
	log_open_inherited();
	return render_worker_main();
}
