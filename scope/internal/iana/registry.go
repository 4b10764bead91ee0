package iana

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"strings"
)

// Row is one address block of a registry, as the generator reads it.
type Row struct {
	Prefix     netip.Prefix
	Name       string // the registry's Name column
	Ref        string // the first RFC cited, "RFC 1918"
	Reachable  string // the Globally Reachable cell: "True", "False", "N/A" or ""
	Terminated bool   // the row has a termination date
}

// Global reports whether the row makes its block globally reachable: only a
// current row whose Globally Reachable cell is True.
func (r Row) Global() bool { return r.Reachable == "True" && !r.Terminated }

// Class is the short class name the scope package reports for the row.
func (r Row) Class() string {
	if c, ok := classByPrefix[r.Prefix.String()]; ok {
		return c
	}
	if c, ok := classByName[r.Name]; ok {
		return c
	}
	return slug(r.Name)
}

// classByName turns registry names into the short class names that rules
// and reasons use ("address class private"). A name missing here gets a
// slug of itself, so a new registry row still generates.
var classByName = map[string]string{
	`"This network"`:                               "this-network",
	`"This host on this network"`:                  "unspecified",
	"Private-Use":                                  "private",
	"Shared Address Space":                         "cgnat",
	"Loopback":                                     "loopback",
	"Loopback Address":                             "loopback",
	"Link Local":                                   "link-local",
	"Link-Local Unicast":                           "link-local",
	"IETF Protocol Assignments":                    "ietf-protocol",
	"IPv4 Service Continuity Prefix":               "ietf-protocol",
	"IPv4 dummy address":                           "ietf-protocol",
	"NAT64/DNS64 Discovery":                        "ietf-protocol",
	"Port Control Protocol Anycast":                "anycast",
	"Traversal Using Relays around NAT Anycast":    "anycast",
	"DNS-SD Service Registration Protocol Anycast": "anycast",
	"AS112-v4":                                     "anycast",
	"AS112-v6":                                     "anycast",
	"AMT":                                          "anycast",
	"Direct Delegation AS112 Service":              "anycast",
	"Documentation":                                "documentation",
	"Documentation (TEST-NET-1)":                   "documentation",
	"Documentation (TEST-NET-2)":                   "documentation",
	"Documentation (TEST-NET-3)":                   "documentation",
	"Deprecated (6to4 Relay Anycast)":              "reserved",
	"6a44-relay anycast address":                   "6a44-relay",
	"Benchmarking":                                 "benchmarking",
	"Reserved":                                     "reserved",
	"Limited Broadcast":                            "broadcast",
	"Unspecified Address":                          "unspecified",
	"IPv4-mapped Address":                          "ipv4-mapped",
	"Discard-Only Address Block":                   "discard",
	"Dummy IPv6 Prefix":                            "reserved",
	"TEREDO":                                       "teredo",
	"Deprecated (previously ORCHID)":               "reserved",
	"ORCHIDv2":                                     "orchid",
	"Drone Remote ID Protocol Entity Tags (DETs) Prefix": "drone-id",
	"6to4":                        "6to4",
	"Segment Routing (SRv6) SIDs": "srv6",
	"Unique-Local":                "unique-local",
	"Multicast":                   "multicast",
	"Global Unicast":              "global",
}

// classByPrefix separates rows that share a registry name: RFC 6052's
// global NAT64 prefix and RFC 8215's local-use one are both "IPv4-IPv6
// Translat.".
var classByPrefix = map[string]string{
	"64:ff9b::/96":   "nat64",
	"64:ff9b:1::/48": "nat64-local",
	"::/0":           "reserved",
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

// footnote is a mark such as " [2]" that IANA appends to a cell.
var footnote = regexp.MustCompile(`\s*\[\d+\]`)

// rfcRef finds the RFC numbers of the RFC column.
var rfcRef = regexp.MustCompile(`\[RFC(\d+)\]`)

// Parse reads one registry CSV. family is 4 or 6 to insist that every block
// is of that family, 0 for a file that mixes both. Columns are found by
// name, so a reordering by IANA does not silently shift them.
func Parse(r io.Reader, family int) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) < 2 {
		return nil, errors.New("no rows")
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, need := range []string{"Address Block", "Name", "RFC", "Termination Date", "Globally Reachable"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("no %q column in header %q", need, recs[0])
		}
	}
	var rows []Row
	for n, rec := range recs[1:] {
		cell := func(name string) string {
			i := col[name]
			if i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(footnote.ReplaceAllString(rec[i], ""))
		}
		reach := cell("Globally Reachable")
		switch reach {
		case "True", "False", "N/A", "":
		default:
			return nil, fmt.Errorf("row %d: Globally Reachable is %q", n+2, reach)
		}
		end := cell("Termination Date")
		row := Row{
			Name:       strings.Join(strings.Fields(cell("Name")), " "),
			Ref:        firstRef(cell("RFC")),
			Reachable:  reach,
			Terminated: end != "" && end != "N/A",
		}
		for _, b := range strings.Split(cell("Address Block"), ",") {
			p, err := netip.ParsePrefix(strings.TrimSpace(b))
			if err != nil {
				return nil, fmt.Errorf("row %d: %w", n+2, err)
			}
			if p != p.Masked() {
				return nil, fmt.Errorf("row %d: %s has host bits set", n+2, p)
			}
			if family == 4 && !p.Addr().Is4() || family == 6 && !p.Addr().Is6() {
				return nil, fmt.Errorf("row %d: %s is not IPv%d", n+2, p, family)
			}
			row.Prefix = p
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// firstRef names the first RFC cited, skipping RFC 8190, which only updated
// the registries' columns and says nothing about the block itself.
func firstRef(s string) string {
	for _, m := range rfcRef.FindAllStringSubmatch(s, -1) {
		if m[1] != "8190" {
			return "RFC " + m[1]
		}
	}
	return strings.Join(strings.Fields(s), " ")
}

// ReadFile parses the registry CSV at path (see Parse).
func ReadFile(path string, family int) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := Parse(f, family)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}
