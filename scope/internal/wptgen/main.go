package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"os"
	"strings"
)

func main() {
	var (
		in     = flag.String("in", "", "path of WPT's url/resources/urltestdata.json")
		out    = flag.String("out", "testdata/wpt-urltestdata-hosts.json", "output file")
		repo   = flag.String("repo", "web-platform-tests/wpt", "repository the input comes from")
		commit = flag.String("commit", "", "commit of the input in that repository")
		via    = flag.String("via", "", "where the copy was taken from, if not the repository itself")
	)
	flag.Parse()
	if err := run(*in, *out, Source{Repository: *repo, Path: "url/resources/urltestdata.json", Commit: *commit, Via: *via}); err != nil {
		slog.Error("wptgen failed", "err", err)
		os.Exit(1)
	}
}

func run(in, out string, src Source) error {
	if in == "" {
		return errors.New("-in is required")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	subset, err := Extract(data, src)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(subset); err != nil {
		return err
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}

// Source names where the test data came from, and its licence.
type Source struct {
	Repository string   `json:"repository"`
	Path       string   `json:"path"`
	Commit     string   `json:"commit,omitempty"`
	Via        string   `json:"via,omitempty"`
	License    []string `json:"license"`
}

// Case is one kept test: the input and base as WPT gives them, and either
// Failure or the expected host parts.
type Case struct {
	Input    string  `json:"input"`
	Base     *string `json:"base"`
	Failure  bool    `json:"failure,omitempty"`
	Href     string  `json:"href,omitempty"`
	Host     string  `json:"host,omitempty"`
	Hostname string  `json:"hostname,omitempty"`
	Port     string  `json:"port,omitempty"`
}

// Subset is the output file.
type Subset struct {
	Source  Source         `json:"source"`
	Skipped map[string]int `json:"skipped"`
	Cases   []Case         `json:"cases"`
}

// license is the licence of web-platform-tests (LICENSE.md).
var license = []string{
	"# The 3-Clause BSD License",
	"",
	"Copyright © web-platform-tests contributors",
	"",
	"Redistribution and use in source and binary forms, with or without modification, are permitted provided that the following conditions are met:",
	"",
	"1. Redistributions of source code must retain the above copyright notice, this list of conditions and the following disclaimer.",
	"",
	"2. Redistributions in binary form must reproduce the above copyright notice, this list of conditions and the following disclaimer in the documentation and/or other materials provided with the distribution.",
	"",
	"3. Neither the name of the copyright holder nor the names of its contributors may be used to endorse or promote products derived from this software without specific prior written permission.",
	"",
	`THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.`,
}

// kept are the schemes ParseURL parses an authority for.
var kept = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true}

// Extract keeps the cases described in the package documentation.
func Extract(data []byte, src Source) (*Subset, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	src.License = license
	out := &Subset{Source: src, Skipped: map[string]int{}, Cases: []Case{}}
	for _, m := range raw {
		var c Case
		if err := json.Unmarshal(m, &c); err != nil {
			out.Skipped["comment"]++
			continue
		}
		scheme, ok := schemeOf(c.Input)
		switch {
		case !ok:
			out.Skipped["no scheme (relative reference)"]++
		case scheme == "file":
			out.Skipped["file scheme"]++
		case !kept[scheme]:
			out.Skipped["non-special scheme"]++
		case c.Base != nil && *c.Base != "about:blank" && baseScheme(*c.Base) == scheme && !authorityFollows(c.Input):
			out.Skipped["same special scheme as the base (parsed relative to it)"]++
		default:
			if c.Failure {
				c = Case{Input: c.Input, Base: c.Base, Failure: true}
			}
			out.Cases = append(out.Cases, c)
		}
	}
	if len(out.Cases) == 0 {
		return nil, errors.New("no case kept: is this urltestdata.json?")
	}
	return out, nil
}

// schemeOf returns the lowercased scheme of an input after WHATWG URL's
// first steps (strip C0 controls and spaces at both ends, drop TAB, LF and
// CR anywhere).
func schemeOf(s string) (string, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return "", false
	}
	for j := 0; j < i; j++ {
		c := s[j]
		alpha := 'a' <= c|0x20 && c|0x20 <= 'z'
		if !alpha && (j == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", false
		}
	}
	return strings.ToLower(s[:i]), true
}

func baseScheme(base string) string {
	s, _ := schemeOf(base)
	return s
}

// authorityFollows reports whether the input's scheme is followed by two
// slashes or backslashes: WHATWG URL then reads an authority whatever the
// base, so such an input is kept even when its scheme equals the base's.
func authorityFollows(input string) bool {
	s := strings.TrimFunc(input, func(r rune) bool { return r <= 0x20 })
	s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	rest := s[strings.IndexByte(s, ':')+1:]
	return len(rest) >= 2 && (rest[0] == '/' || rest[0] == '\\') && (rest[1] == '/' || rest[1] == '\\')
}
