package iana_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/scope/internal/iana"
)

const header = "Address Block,Name,RFC,Allocation Date,Termination Date,Source,Destination,Forwardable,Globally Reachable,Reserved-by-Protocol\n"

// fixture has what IANA's files hold: footnote marks on blocks and flags,
// two blocks in one quoted cell, a line break inside a quoted cell, a
// terminated row with empty flags, quotes doubled inside a cell, and N/A.
const fixture = header + `0.0.0.0/8,"""This network""","[RFC791], Section 3.2",1981-09,N/A,True,False,False,False,True
127.0.0.0/8,Loopback,"[RFC1122], Section 3.2.1.3",1981-09,N/A,False [1],False [1],False [1],False [1],True
192.0.0.9/32,Port Control Protocol Anycast,[RFC7723],2015-10,N/A,True,True,True,True,False
"192.0.0.170/32, 192.0.0.171/32",NAT64/DNS64 Discovery,"[RFC8880][RFC7050], Section 2.2",2013-02,N/A,False,False,False,False,True
192.88.99.0/24,Deprecated (6to4 Relay Anycast),[RFC7526],2001-06,2015-03,,,,,
255.255.255.255/32,Limited Broadcast,"[RFC8190]
        [RFC919], Section 7",1984-10,N/A,False,True,False,False,True
2002::/16 [3],6to4,[RFC3056],2001-02,N/A,True,True,True,N/A [3],False
64:ff9b:1::/48,IPv4-IPv6 Translat.,[RFC8215],2017-06,N/A,True,True,True,False,False
2001:30::/28,Some Future Block,[RFC9999],2030-01,N/A,True,True,True,True,False
`

func TestParse(t *testing.T) {
	t.Parallel()
	rows, err := iana.Parse(strings.NewReader(fixture), 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s|%v|%s", r.Prefix, r.Name, r.Ref, r.Reachable, r.Global(), r.Class()))
	}
	want := []string{
		`0.0.0.0/8|"This network"|RFC 791|False|false|this-network`,
		"127.0.0.0/8|Loopback|RFC 1122|False|false|loopback",
		"192.0.0.9/32|Port Control Protocol Anycast|RFC 7723|True|true|anycast",
		"192.0.0.170/32|NAT64/DNS64 Discovery|RFC 8880|False|false|ietf-protocol",
		"192.0.0.171/32|NAT64/DNS64 Discovery|RFC 8880|False|false|ietf-protocol",
		"192.88.99.0/24|Deprecated (6to4 Relay Anycast)|RFC 7526||false|reserved",
		"255.255.255.255/32|Limited Broadcast|RFC 919|False|false|broadcast",
		"2002::/16|6to4|RFC 3056|N/A|false|6to4",
		"64:ff9b:1::/48|IPv4-IPv6 Translat.|RFC 8215|False|false|nat64-local",
		"2001:30::/28|Some Future Block|RFC 9999|True|true|some-future-block",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Parse:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestGlobal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reach      string
		terminated bool
		want       bool
	}{
		{"True", false, true},
		{"True", true, false},
		{"False", false, false},
		{"N/A", false, false},
		{"", false, false},
		{"", true, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q terminated=%v", tt.reach, tt.terminated), func(t *testing.T) {
			t.Parallel()
			r := iana.Row{Prefix: netip.MustParsePrefix("192.0.2.0/24"), Reachable: tt.reach, Terminated: tt.terminated}
			if got := r.Global(); got != tt.want {
				t.Errorf("Global() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		family int
		want   string
	}{
		{"empty", "", 0, "no rows"},
		{"header only", header, 0, "no rows"},
		{"missing column", "Address Block,Name\n10.0.0.0/8,x\n", 0, `no "RFC" column`},
		{"odd reachable", header + "10.0.0.0/8,x,[RFC1],1,N/A,1,1,1,Maybe,1\n", 0, `Globally Reachable is "Maybe"`},
		{"host bits", header + "10.0.0.1/8,x,[RFC1],1,N/A,1,1,1,False,1\n", 0, "host bits"},
		{"bad prefix", header + "10.0.0.0/33,x,[RFC1],1,N/A,1,1,1,False,1\n", 0, "row 2"},
		{"wrong family", header + "::/128,x,[RFC1],1,N/A,1,1,1,False,1\n", 4, "not IPv4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := iana.Parse(strings.NewReader(tt.in), tt.family)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	t.Parallel()
	if _, err := iana.ReadFile("testdata/does-not-exist.csv", 4); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile of a missing file: %v, want fs.ErrNotExist", err)
	}
}
