// Package fleet holds the limits a fleet of browsergate daemons
// (replicas) shares in one PostgreSQL database, the central store of
// evidence/central: the MCP sessions open across the fleet, as leases
// (Leases, for serve's --max-sessions and --max-sessions-per-agent), and
// one schedule of turns per manifest and host (Schedule, for
// requests_per_second_per_host).
//
// Every answer comes from the database or is an error: the daemon refuses
// a session, or a request, it cannot count, rather than let it through
// (docs/fleet-limits.md).
package fleet
