/* interrupt.c - the signal handler, and the flag long work polls
 *
 * A terminating signal outranks an interrupt: SIGINT recorded after
 * SIGTERM or SIGHUP does not replace it, so a console asked to end does
 * not merely go back to its prompt.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int hs_interrupt_sqlite(void *arg)
{
	(void)arg;
	return hs_interrupted() != 0;
}

/* a tenth of a second for the reader, then a look at the flag */
static int wait_fd(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	if (hs_interrupted()) {
		errno = EINTR;
		return -1;
	}
	if (fd < 0)
		return poll(NULL, 0, 100) < 0 && errno != EINTR ? -1 : 0;
	return poll(&p, 1, 100) < 0 && errno != EINTR ? -1 : 0;
}

static ssize_t fifo_write(void *cookie, const char *buf, size_t n)
{
	int fd = (int)(intptr_t)cookie;
	size_t done = 0;
	sigset_t pipe_sig, old;

	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	while (done < n) {
		/* a reader gone: EPIPE here, its SIGPIPE taken back */
		pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
		ssize_t k = write(fd, buf + done, n - done);
		int e = errno;
		if (k < 0 && e == EPIPE) {
			struct timespec now = { 0, 0 };
			sigtimedwait(&pipe_sig, NULL, &now);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (k > 0) {
			done += (size_t)k;
			continue;
		}
		if (k < 0 && e != EAGAIN && e != EINTR) {
			errno = e;
			return -1;
		}
		if (wait_fd(fd, POLLOUT) < 0)
			return -1;
	}
	return (ssize_t)n;
}

static int fifo_close(void *cookie)
{
	return close((int)(intptr_t)cookie);
}

/* a file that is no FIFO, opened without blocking: a stream that blocks
 * as any other */
static FILE *fdopen_blocking(int fd, const char *mode)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fdopen(fd, mode);
}

static ssize_t fifo_read(void *cookie, char *buf, size_t n)
{
	int fd = (int)(intptr_t)cookie;

	for (;;) {
		ssize_t k = read(fd, buf, n);
		if (k >= 0)
			return k;	/* 0: every writer gone, the end */
		if (errno != EAGAIN && errno != EINTR)
			return -1;
		if (wait_fd(fd, POLLIN) < 0)
			return -1;
	}
}

FILE *hs_fopen_read(const char *path)
{
	static const cookie_io_functions_t fifo = { .read = fifo_read, .close = fifo_close };
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *fp = NULL;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
		/* before its first writer a FIFO reads as ended: wait for it
		 * (Linux says POLLHUP only once a writer came and went) */
		for (;;) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			int r;
			if (hs_interrupted()) {
				errno = EINTR;
				goto fail;
			}
			if ((r = poll(&p, 1, 100)) > 0)
				break;
			if (r < 0 && errno != EINTR)
				goto fail;
		}
		fp = fopencookie((void *)(intptr_t)fd, "r", fifo);
	} else {
		fp = fdopen_blocking(fd, "r");
	}
	if (fp)
		return fp;
fail:;
	int e = errno;
	close(fd);
	errno = e;
	return NULL;
}

FILE *hs_fopen_write(const char *path)
{
	static const cookie_io_functions_t fifo = { .write = fifo_write, .close = fifo_close };
	int fd;
	struct stat st;
	FILE *fp;

	/* non-blocking, a FIFO without a reader is ENXIO rather than a
	 * wait no signal ends; nothing else is opened differently */
	while ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666)) < 0) {
		if (errno != ENXIO || wait_fd(-1, 0) < 0)
			return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
		fp = fopencookie((void *)(intptr_t)fd, "w", fifo);
	} else {
		fp = fdopen_blocking(fd, "w");
	}
	if (!fp) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return fp;
}
