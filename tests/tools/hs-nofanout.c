/* hs-nofanout.c - preloaded (LD_PRELOAD) into a program under test: the
 * kernel's packet fanout refused, as by one that has none (a sandbox's,
 * an old one) or forbids it. setsockopt(PACKET_FANOUT) fails with
 * ENOPROTOOPT; every other call goes through. For tests/lab/workers.sh. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <sys/socket.h>

#ifndef SOL_PACKET
#define SOL_PACKET 263
#endif

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static int (*next)(int, int, int, const void *, socklen_t);

	if (level == SOL_PACKET && name == PACKET_FANOUT) {
		errno = ENOPROTOOPT;
		return -1;
	}
	if (!next)
		*(void **)&next = dlsym(RTLD_NEXT, "setsockopt");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	return next(fd, level, name, val, len);
}
