package scope

import "net/netip"

// rangeEntry is one row of the address tables: a block, the class it gives,
// whether the block is globally reachable, and the reference behind it. The
// registry rows are generated into classify_gen.go; the metadata rows below
// are written by hand, because no registry lists them.
type rangeEntry struct {
	prefix netip.Prefix
	name   string
	global bool
	ref    string
}

// metadataAddrs are cloud instance-metadata endpoints. They sit in ranges
// that are already non-global (or, for 100.100.100.200, in CGNAT space), but
// no allow_private_cidrs grant may ever reach them: whoever reaches them
// gets the host's cloud credentials. Lookup is longest prefix first, so
// these /32 and /128 rows win over the blocks that contain them.
var metadataAddrs = []rangeEntry{
	{netip.MustParsePrefix("169.254.169.254/32"), "metadata", false, "AWS/GCP/Azure instance metadata"},
	{netip.MustParsePrefix("169.254.170.2/32"), "metadata", false, "AWS ECS task metadata"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "metadata", false, "AWS instance metadata over IPv6"},
	{netip.MustParsePrefix("100.100.100.200/32"), "metadata", false, "Alibaba Cloud instance metadata"},
	{netip.MustParsePrefix("192.0.0.192/32"), "metadata", false, "Oracle Cloud instance metadata"},
}
