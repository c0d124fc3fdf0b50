/* interrupt.h - one path from SIGINT, SIGTERM and SIGHUP to the work running
 *
 * One handler catches the three signals: it records the signal and wakes
 * the loop. Work that runs long without returning to the loop (a query, a
 * filter compile, a wait on a file) polls hs_interrupted() and gives up;
 * the console acts on the signal when the loop turns again (console.c),
 * and the runner runs no further line before it has. A signal recorded
 * and never acted on still sets the exit status (main.c).
 */
#ifndef HS_INTERRUPT_H
#define HS_INTERRUPT_H

#include <stdio.h>
#include <uv.h>

/* catch SIGINT, SIGTERM and SIGHUP from now on; wake is sent (from the
 * handler: uv_async_send is async-signal-safe) at each one. NULL before
 * wake is closed: signals are still caught and recorded. */
void hs_interrupt_init(uv_async_t *wake);
/* the signal waiting to be acted on, 0 for none: long work stops when
 * this is not 0. A cheap load, for loops. */
int hs_interrupted(void);
/* take the signal waiting (0 for none); the next hs_interrupted() is 0 */
int hs_interrupt_take(void);
/* a progress handler for SQLite (sqlite3_progress_handler): non-zero, so
 * the statement running fails with SQLITE_INTERRUPT, once a signal is
 * recorded */
int hs_interrupt_sqlite(void *arg);

/* fopen(path, "w") that a signal can stop: a FIFO with no reader yet is
 * waited for (opened without blocking, again every tenth of a second)
 * and a FIFO's writes wait for its reader the same way, a reader gone
 * being EPIPE, not SIGPIPE. NULL with errno set, EINTR for a signal. */
FILE *hs_fopen_write(const char *path);
/* fopen(path, "r") that a signal can stop: a FIFO is waited for, its
 * first writer and then each of its reads, by looks every tenth of a
 * second. NULL with errno set, EINTR for a signal; a read a signal
 * stopped fails with EINTR. */
FILE *hs_fopen_read(const char *path);

#endif
