/* interrupt.c - the signal handler, and the flag long work polls
 *
 * A terminating signal outranks an interrupt: SIGINT recorded after
 * SIGTERM or SIGHUP does not replace it, so a console asked to end does
 * not merely go back to its prompt.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "interrupt.h"

static atomic_int pending;
static uv_async_t *_Atomic wake_handle;
static bool installed;

static void on_signal(int sig)
{
	int saved = errno;
	int cur = atomic_load(&pending);
	uv_async_t *w;

	if (sig == SIGINT && cur != 0)
		sig = cur;
	atomic_store(&pending, sig);
	w = atomic_load(&wake_handle);
	if (w)
		uv_async_send(w);
	errno = saved;
}

void hs_interrupt_init(uv_async_t *wake)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	atomic_store(&wake_handle, wake);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask);
	/* restarted: a read or write the signal came in the middle of goes
	 * on, and work that waits (a file's open, a child) polls the flag */
	sa.sa_flags = SA_RESTART;
	if (!installed)
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			sigaction(sigs[i], &sa, NULL);
	installed = true;
}

int hs_interrupted(void)
{
	return atomic_load_explicit(&pending, memory_order_relaxed);
}

int hs_interrupt_take(void)
{
	return atomic_exchange(&pending, 0);
}
