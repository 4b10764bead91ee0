// Command wptgen extracts, from the web-platform-tests URL test data
// (url/resources/urltestdata.json, BSD-3-Clause), the cases that
// scope.ParseURL can be held to: absolute URLs of the special schemes
// browsergate parses (http, https, ws, wss, ftp) whose result does not
// depend on a base URL. It writes them, with their expected failure or
// host, hostname and port, to scope/testdata/wpt-urltestdata-hosts.json,
// which scope's TestWPTHosts reads.
//
// The source file is not vendored whole; fetch it, then run from the scope
// directory:
//
//	go run ./internal/wptgen -in /path/to/urltestdata.json -commit <wpt commit> \
//	    -out testdata/wpt-urltestdata-hosts.json
//
// Skipped, and counted in the output's "skipped" object: comment strings;
// inputs with no scheme (relative references: browsergate never resolves
// against a base); non-special schemes and file: (ParseURL keeps them
// opaque, and Check refuses them); inputs whose special scheme equals the
// base's and is not followed by two slashes or backslashes, which WHATWG
// URL parses relative to the base ("http:foo.com" against an http base is
// a path, not a host).
package main
