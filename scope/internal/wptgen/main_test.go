package main

import (
	"slices"
	"testing"
)

func TestExtract(t *testing.T) {
	t.Parallel()
	data := []byte(`[
  "# a comment",
  {"input": "http://Example.com:81/", "base": null, "href": "http://example.com:81/", "host": "example.com:81", "hostname": "example.com", "port": "81", "pathname": "/"},
  {"input": "http://f:b/c", "base": "http://example.org/foo/bar", "failure": true},
  {"input": "http:foo.com", "base": "http://example.org/foo/bar", "hostname": "example.org"},
  {"input": "http:\\\\x\\y", "base": "http://example.org/", "hostname": "x"},
  {"input": "https:foo.com", "base": "http://example.org/", "hostname": "foo.com"},
  {"input": "/relative", "base": "http://example.org/", "hostname": "example.org"},
  {"input": "file:///etc", "base": null, "hostname": ""},
  {"input": "non-special://h/", "base": null, "hostname": "h"},
  {"input": " \tWS://h/", "base": "about:blank", "hostname": "h"}
]`)
	got, err := Extract(data, Source{Repository: "r", Path: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for _, c := range got.Cases {
		inputs = append(inputs, c.Input)
	}
	want := []string{"http://Example.com:81/", "http://f:b/c", `http:\\x\y`, "https:foo.com", " \tWS://h/"}
	if !slices.Equal(inputs, want) {
		t.Errorf("kept %q, want %q", inputs, want)
	}
	for reason, n := range map[string]int{
		"comment": 1, "no scheme (relative reference)": 1, "file scheme": 1, "non-special scheme": 1,
		"same special scheme as the base (parsed relative to it)": 1,
	} {
		if got.Skipped[reason] != n {
			t.Errorf("skipped[%q] = %d, want %d (all: %v)", reason, got.Skipped[reason], n, got.Skipped)
		}
	}
	if c := got.Cases[0]; c.Hostname != "example.com" || c.Port != "81" || c.Failure {
		t.Errorf("first case = %+v", c)
	}
	if len(got.Source.License) == 0 {
		t.Error("no licence text in the output")
	}
	if _, err := Extract([]byte(`["only a comment"]`), Source{}); err == nil {
		t.Error("Extract kept nothing and did not fail")
	}
}
