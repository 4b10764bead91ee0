// Package netlab builds hosts for tests out of Linux network namespaces.
// A test makes a Lab, adds hosts (each a namespace of its own, lo up),
// joins them with veth links, gives them addresses, routes and nftables
// rulesets, and runs processes or opens sockets inside them: issue #35's
// tests put the daemon, a pool of Chromium hosts, the test sites and a
// canary on separate "machines" of one machine this way.
//
// The project's rule for addresses outside 127.0.0.0/8 (DESIGN.md,
// "Testing": they live only inside network namespaces the test made) holds
// by construction. Every address is added inside a lab namespace, and a
// veth pair is created with each end already in its own lab namespace
// (`ip -n A link add … peer name … netns B`), so no interface of a lab ever
// exists in the root namespace and a lab has no path off the machine.
//
// Namespaces are named bglab-PID-N-NAME after the process that made them,
// so New first removes those a killed test left behind (their process is
// gone) and never those of a live process. When the test ends, the lab
// closes the sockets Listen and Dial made, kills every process still
// inside its namespaces (a process or socket inside keeps a namespace, and
// its links, alive after `ip netns delete`), and deletes the namespaces.
//
// Making namespaces needs CAP_SYS_ADMIN and CAP_NET_ADMIN (root),
// iproute2's ip and util-linux's nsenter; New skips the test without them.
// The package is imported only by _test.go files.
package netlab
