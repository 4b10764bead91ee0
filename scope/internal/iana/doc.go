// Package iana reads the IANA IPv4 and IPv6 Special-Purpose Address
// Registries in the CSV form IANA publishes (and browsergate's supplement in
// the same columns), and names the address class each row gives. The
// generator (scope/internal/ianagen) and scope's tests share it, so the
// tables and the tests that check them read the registries the same way.
package iana
