// Package loadtest drives an MCP endpoint — a stdio command or a streamable
// HTTP URL, in either protocol era — and measures it: handshake and
// tools/list time, N calls of one tool at concurrency C over S sessions
// (p50/p90/p99/max latency, calls/s, errors), and the RSS and CPU time of
// a process. Compare runs one workload directly against a stdio server and
// through a Plexus daemon it starts on a temporary home, and reports both
// with their ratios (R-Q-2: what counts is a ratio measured side by
// side in one run, because these machines are shared and noisy).
//
// It is the logic of cmd/plexus-load. It speaks MCP through the official
// Go SDK client and reaches the daemon only as a client would: its binary,
// its socket API (status) and its MCP face.
package loadtest
