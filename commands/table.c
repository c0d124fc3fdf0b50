/* table.c - the one list of verbs: dispatch, help, completion, man-page lint */
#include "cmd.h"
#include "hs.h"

static const char *const capture_words[] = { "start", "stop", "status", "buffer", "workers", "again",
	"--for", NULL };
static const char *const filter_words[] = { "add", "del", "list", NULL };
static const char *const set_words[] = { "format", "db", "analyzer", "trace-timeout", "history",
	"view", "pager", "tz", "retention", NULL };
static const char *const traces_words[] = { "show", "flow", "switch", "outcome", "since",
	"limit", NULL };
static const char *const probe_words[] = { "tcp", "udp", "icmp", "link", "flags", "ttl",
	"dscp", "ecn", "id", "len", "from", "via", "count", "interval", "timeout", "--badsum",
	"--expect", "--json", NULL };
static const char *const traceroute_words[] = { "count", "interval", "--report", "proto",
	"from", "max-ttl", "timeout", "--json", NULL };
static const char *const mirror_words[] = { "add", "del", "list", "on", "session", "all",
	"default", "syn", "fin", "rst", "debug", "bgp", "roce", "flow", "prefix", "tcp", "udp",
	"icmp", "any", NULL };
static const char *const decode_words[] = { "-c", NULL };
static const char *const topo_words[] = { "load", "show", NULL };
static const char *const history_words[] = { "sessions", "flows", "traces", "probes", "events",
	"control", "prune", "load", "show", "limit", NULL };

static const char *const drops_words[] = { "limit", NULL };	/* flows' too */
static const char *const ecmp_words[] = { "window", "--threshold", NULL };
static const char *const blame_words[] = { "--epoch", "--all", NULL };
static const char *const control_words[] = { "bgp", "roce", "pfc", "limit", "since", NULL };
static const char *const stats_words[] = { "by", "window", "where", "file", "for", "keys", NULL };
static const char *const export_words[] = { "ndjson", "pcap", "--force", "records", "flow",
	"switch", "outcome", "since", "limit", NULL };
static const char *const rates_words[] = { "limit", "window", NULL };
static const char *const alert_words[] = { "add", "list", "del", "link", "flow", "drops", "retx",
	"util", "bps", NULL };
static const char *const snapshot_words[] = { "take", "list", "show", "diff", "--threshold", NULL };

const struct hs_cmd hs_cmds[] = {
	{ "help", cmd_help, "[VERB]",
	  "list the verbs, or show one verb's synopsis", NULL, 0 },
	{ "quit", cmd_quit, "",
	  "leave the console (stops capture, commits history)", NULL, 0 },
	{ "exit", cmd_quit, "", "same as quit", NULL, HS_CMDF_ALIAS },
	{ "set", cmd_set, "[format|db|analyzer|trace-timeout|history|view|pager|tz|retention] [VALUE...]",
	  "show or change a setting", set_words, 0 },
	{ "source", cmd_source, "<FILE>",
	  "run the commands of a runbook file", NULL, 0 },
	{ "sleep", cmd_sleep, "<DURATION>",
	  "wait, letting capture and timers run", NULL, 0 },
	{ "capture", cmd_capture, "start|stop|status [IFACE|FILE] [buffer SIZE] [workers N] [again] [--for DURATION]",
	  "start, stop or show the packet source", capture_words, 0 },
	{ "filter", cmd_filter, "add|del|list [EXPR...|ID]",
	  "analyzer-side BPF filters on the inner packet", filter_words, 0 },
	{ "decode", cmd_decode, "<FILE> [EXPR...] [-c N]",
	  "print one line per frame of a capture file (those EXPR matches), without history",
	  decode_words, 0 },
	{ "traces", cmd_traces, "[show ID] [flow FLOW] [switch SW] [outcome O] [since T] [limit N]",
	  "list closed traces, or one trace hop by hop", traces_words, HS_CMDF_PAGE },
	{ "flows", cmd_flows, "[limit N]",
	  "list flows seen in traces with their counters", drops_words, HS_CMDF_PAGE },
	{ "topo", cmd_topo, "load|show [FILE]",
	  "load or show the fabric topology", topo_words, 0 },
	{ "history", cmd_history,
	  "[sessions|flows|traces|probes|events|control|prune|load|show ID|load since DURATION] "
	  "[limit N]",
	  "query the stored history", history_words, HS_CMDF_PAGE },
	{ "sql", cmd_sql, "<QUERY...>",
	  "run a read-only SQL query on the history", NULL, HS_CMDF_PAGE },
	{ "probe", cmd_probe, "[tcp|udp|icmp|link] <SPEC...>",
	  "inject a guided probe and follow its mirrored copies", probe_words, 0 },
	{ "traceroute", cmd_traceroute, "<HOST[:PORT]> [count N] [--report] [OPTION...]",
	  "per-hop loss and latency toward a host, or a flow's path, with TTL 1..15",
	  traceroute_words, 0 },
	{ "watch", cmd_watch, "",
	  "full-screen live view of traces, hops, links and events", NULL, 0 },
	{ "mirror", cmd_mirror, "add|del|list [on SW,...] [session N] [MATCH...]",
	  "add, delete or list the switches' mirror rules", mirror_words, 0 },
	{ "drops", cmd_drops, "[limit N]",
	  "dropped traces by the directed link after the last hop seen", drops_words, HS_CMDF_PAGE },
	{ "loops", cmd_loops, "[limit N]",
	  "looped traces by the cycle of switches", drops_words, HS_CMDF_PAGE },
	{ "latency", cmd_latency, "[limit N]",
	  "per-hop and per-link latency percentiles and outliers", drops_words, HS_CMDF_PAGE },
	{ "ecmp", cmd_ecmp, "<SWITCH> [window D] [--threshold X]",
	  "how a switch's ECMP groups split flows and bytes over next hops", ecmp_words, HS_CMDF_PAGE },
	{ "blame", cmd_blame, "[--epoch DURATION] [--all]",
	  "007: links voted lossy by the flows that retransmitted", blame_words, HS_CMDF_PAGE },
	{ "control", cmd_control, "[bgp|roce|pfc] [limit N] [since T]",
	  "recent BGP, RoCEv2 (acks, naks) and PAUSE/PFC messages with their counts",
	  control_words, HS_CMDF_PAGE },
	{ "stats", cmd_stats, "by <FIELDS> [window D] [where FILTER...] [file PATH|for D] [keys N]",
	  "packets, bytes, flows and drops per key in tumbling time windows", stats_words, 0 },
	{ "export", cmd_export, "ndjson|pcap <FILE|-> [--force] [records R] [flow FLOW] [switch SW] [outcome O] [since T] [limit N]",
	  "write traces and their packet records as JSON lines or pcapng", export_words, 0 },
	{ "rates", cmd_rates, "[limit N] [window D]",
	  "flow rates from sampled TCP sequence numbers, and link load", rates_words, HS_CMDF_PAGE },
	{ "alert", cmd_alert, "add|list|del [COND...|ID]",
	  "alerts on link load, flow rates, drops and retransmissions", alert_words, 0 },
	{ "snapshot", cmd_snapshot, "take|list|show|diff [ID] [ID] [--threshold X]",
	  "synchronized port counters of every switch; compare two, ECMP shares", snapshot_words, 0 },
};

const unsigned hs_ncmds = HS_ARRAY_SIZE(hs_cmds);

/* what completes a keyword's value (hs_cmd_values, cmd.h) */
static const char *const outcome_vals[] = { "delivered", "dropped", "looped", "unknown", NULL };
static const char *const format_vals[] = { "text", "json", NULL };
static const char *const history_vals[] = { "default", "all", "off", NULL };
static const char *const onoff_vals[] = { "on", "off", NULL };
static const char *const tz_vals[] = { "utc", "local", NULL };
static const char *const view_vals[] = { "auto", "fabric", "local", NULL };
static const char *const retention_vals[] = { "off", "1d", "7d", "30d", "1GiB", "10GiB", NULL };
static const char *const records_vals[] = { "all", "traces", "packets", NULL };
static const char *const expect_vals[] = { "delivered", "lost", NULL };
static const char *const proto_vals[] = { "tcp", "udp", NULL };
static const char *const since_words[] = { "since", NULL };
static const char *const stats_fields[] = { "src", "dst", "sport", "dport", "proto", "switch",
	"flow", "dscp", NULL };

const struct hs_cmd_value hs_cmd_values[] = {
	{ NULL, "switch", HS_VAL_SWITCH, NULL },
	{ NULL, "outcome", HS_VAL_WORDS, outcome_vals },
	{ "help", NULL, HS_VAL_VERB, NULL },
	{ "source", NULL, HS_VAL_FILE, NULL },
	{ "decode", NULL, HS_VAL_FILE, NULL },
	{ "topo", "load", HS_VAL_FILE, NULL },
	{ "capture", "start", HS_VAL_FILE, NULL },
	{ "stats", "file", HS_VAL_FILE, NULL },
	{ "export", "ndjson", HS_VAL_FILE, NULL },
	{ "export", "pcap", HS_VAL_FILE, NULL },
	{ "export", "records", HS_VAL_WORDS, records_vals },
	{ "set", "format", HS_VAL_WORDS, format_vals },
	{ "set", "history", HS_VAL_WORDS, history_vals },
	{ "set", "pager", HS_VAL_WORDS, onoff_vals },
	{ "set", "tz", HS_VAL_WORDS, tz_vals },
	{ "set", "view", HS_VAL_WORDS, view_vals },
	{ "set", "retention", HS_VAL_WORDS, retention_vals },
	{ "set", "db", HS_VAL_FILE, NULL },
	{ "stats", "by", HS_VAL_LIST, stats_fields },
	{ "ecmp", NULL, HS_VAL_SWITCH, NULL },
	{ "mirror", "on", HS_VAL_SWITCHES, NULL },
	{ "probe", "via", HS_VAL_SWITCHES, NULL },
	{ "probe", "link", HS_VAL_SWITCH, NULL },
	{ "probe", "--expect", HS_VAL_WORDS, expect_vals },
	{ "traceroute", "proto", HS_VAL_WORDS, proto_vals },
	{ "traces", "show", HS_VAL_TRACE, NULL },
	{ "history", "show", HS_VAL_STORED_TRACE, NULL },
	{ "history", "load", HS_VAL_WORDS, since_words },
};

const unsigned hs_ncmd_values = HS_ARRAY_SIZE(hs_cmd_values);

/* what may write the history (hs_cmd_stores, cmd.h); 'source' and 'watch'
 * run any line */
const struct hs_cmd_store hs_cmd_stores[] = {
	{ "capture", "start" },
	{ "probe", NULL },
	{ "traceroute", NULL },
	{ "blame", NULL },
	{ "snapshot", "take" },
	{ "source", NULL },
	{ "watch", NULL },
};

const unsigned hs_ncmd_stores = HS_ARRAY_SIZE(hs_cmd_stores);
