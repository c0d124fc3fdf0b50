/* capture.h - packet sources (live interface or capture file) on the loop
 *
 * Live: pcap_create, TPACKET_V3 blocks handed over when full or after
 * HS_LIVE_TIMEOUT_MS, non-blocking, uv_poll on the selectable fd plus a
 * timer for pcap_get_required_select_timeout().
 * Files: read in slices of HS_FILE_BATCH frames per loop turn (uv_idle), so
 * the prompt stays responsive. Each frame goes through hs_pipeline_frame().
 */
#ifndef HS_CAPTURE_H
#define HS_CAPTURE_H

#include <uv.h>
#include "hs.h"

/* live: frames per callback, so a flood cannot starve the prompt. A block
 * of the kernel's ring (256 KiB) holds some 1,500 copies of short packets:
 * 4096 take a flood's block, or a few, in one turn of the loop, about a
 * millisecond, where 256 took four to six turns of it, each a wait on the
 * loop's descriptors (a system call) and a drain of the pipeline */
#define HS_CAP_BATCH 4096
/* live: the longest a frame waits in a part-filled block of the kernel's
 * ring before the loop is woken for it ('watch' and alerts stay live) */
#define HS_LIVE_TIMEOUT_MS 5
/* live: the kernel's ring unless 'capture start IFACE buffer SIZE' says
 * otherwise. A mirror stream comes in bursts: a copy of a short packet takes
 * about 190 bytes of it with the kernel's header, so this holds some
 * 170,000 copies, a third of a second at 500,000 a second */
#define HS_LIVE_RING (32u << 20)
#define HS_LIVE_RING_MIN (1u << 20)
#define HS_LIVE_RING_MAX (1u << 30)
/* A file: frames per loop turn. Each turn costs a poll of the loop's
 * descriptors (a system call) and a drain of the pipeline's prefetches:
 * with 256 frames a turn that was about 4% of reading the bench capture.
 * 4096 frames take under a millisecond (3 ms with 'history all'), well
 * within the time a line typed at the prompt may wait; 16384 gained
 * nothing more. */
#define HS_FILE_BATCH 4096

struct hs_ctx;

struct hs_capture_stats {
	uint64_t packets, bytes;
	uint64_t decode_errors;	/* frames that could not be decoded, not_ip apart */
	uint64_t not_ip;	/* frames with no IP packet in them (ARP, LLDP, ...): not errors */
	uint64_t kernel_drops, if_drops;
	uint64_t filtered;	/* dropped by analyzer filters, and the analyzer's own probes */
	uint64_t started_ns, ended_ns;	/* wall clock */
	uint64_t first_ts, last_ts;	/* capture time */
};

/* one worker's share of a capture read by several (workers.h) */
struct hs_worker_stats {
	uint64_t packets;	/* frames it took */
	uint64_t kernel_drops;	/* live: frames the kernel dropped at its socket */
};

#define HS_TRACER_RING	8192	/* closed traces a console keeps (for 'traces') */

/* create the tracer, flow table, filters and history commit timer (at
 * console start), and tear them down (stops capture, commits) at exit */
int hs_pipeline_init(struct hs_ctx *ctx);
void hs_pipeline_fini(struct hs_ctx *ctx);

/* start reading from an interface (live, with a kernel ring of ring bytes,
 * 0: HS_LIVE_RING) or a file, with workers threads (workers.h; 0: 'set
 * workers', --workers); 0 or -1 with the error told (ctx->say) */
int hs_capture_start(struct hs_ctx *ctx, const char *source, bool is_file, uint64_t ring,
		     uint64_t for_ns, unsigned workers);
/* stop: closes open traces, ends the history session */
void hs_capture_stop(struct hs_ctx *ctx, const char *why);
bool hs_capture_running(const struct hs_ctx *ctx);
/* another module queued a history row of the running capture (queued) or
 * could not: counted, and the batch committed when full, like traces */
void hs_capture_row(struct hs_ctx *ctx, bool queued);
/* called when a capture ends by itself (file done, --for elapsed) */
typedef void (*hs_capture_done_cb)(struct hs_ctx *ctx, int status);
void hs_capture_on_done(struct hs_ctx *ctx, hs_capture_done_cb cb);

/* the current or last capture, for 'capture status': false before the first.
 * end_reason is "" while running; stored/unstored count history rows queued
 * and rows the history could not take (not open, locked, write error). */
bool hs_capture_info(struct hs_ctx *ctx, const char **source, bool *is_file,
		     const char **end_reason, uint64_t *stored, uint64_t *unstored);
/* the history writer of a live capture: traces queued and not written yet,
 * and traces its full queue refused (counted in hs_capture_info's unstored) */
void hs_capture_writer(struct hs_ctx *ctx, uint64_t *queued, uint64_t *behind);
/* history rows queued and not committed yet: the batch being filled, or
 * rows held while the history's server cannot be reached */
uint64_t hs_capture_waiting(struct hs_ctx *ctx);
/* a file's workers (workers.h) read the topology and the filters: before
 * either changes, they wait between batches for the rest of this loop turn */
void hs_capture_pause(struct hs_ctx *ctx);
/* the topology is about to become t, ctx->topo still the old one (the
 * caller holds the store, hs_ctx_hold_store): the workers paused, the
 * tracers name hops and judge outcomes by t */
struct hs_topo;
void hs_capture_set_topo(struct hs_ctx *ctx, const struct hs_topo *t);
/* 'set trace-timeout': the tracers, the workers' too (paused), close a
 * trace after ns of quiet from now on */
void hs_capture_set_timeout(struct hs_ctx *ctx, uint64_t ns);
/* 'set history': the traces the history keeps from now on (an
 * HS_POLICY_*; the default keeps every trace on PostgreSQL, as all does),
 * and 'set db': those of the setting in the history now named; with off
 * the history writer is not even told of them */
void hs_capture_set_policy(struct hs_ctx *ctx, int policy);
/* a running capture's analyzer writes its heartbeat in its history this
 * often (store.h) */
#define HS_HEARTBEAT_NS (5 * HS_NS_PER_SEC)
/* a history setting's name (default, all, off), NULL for no HS_POLICY_* */
const char *hs_capture_policy_name(int policy);
/* the workers of the current or last capture, and each one's figures
 * (read by one: 1, and no figures); *one_why: why one read where more were
 * asked for or are the default ("not the default 2: why"), else "" */
unsigned hs_capture_workers(struct hs_ctx *ctx, const struct hs_worker_stats **per,
			    const char **one_why);
/* the current or last live capture's kernel ring: bytes asked and bytes
 * the kernel gave (0 when it cannot be told); both 0 for a file */
void hs_capture_ring(struct hs_ctx *ctx, uint64_t *asked, uint64_t *got);
/* tracer counters since the current/last capture began (open: now) */
struct hs_tracer_stats;
void hs_capture_trace_stats(struct hs_ctx *ctx, struct hs_tracer_stats *st);

#endif
