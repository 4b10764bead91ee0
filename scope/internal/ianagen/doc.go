// Command ianagen writes scope's address-class tables (classify_gen.go) from
// the IANA IPv4 and IPv6 Special-Purpose Address Registries, as IANA
// publishes them in CSV, plus a small supplement CSV for the blocks those
// registries do not list (multicast, and the IPv6 space outside 2000::/3).
//
// Run it through go generate in the scope directory:
//
//	go generate ./scope
//
// The rule it applies is the one the package promises: an address block is
// global only when its registry row says "Globally Reachable: True" and the
// row has no termination date. False, N/A, an empty cell and a terminated
// row all give a non-global block, so that anything the registry does not
// positively call reachable fails closed.
package main
