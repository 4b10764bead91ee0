package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/browsergate/browsergate/toolclad"
)

// TestStarterManifestOffersASecret: the manifest init writes has a
// commented [secrets] example for the site's sign-in, which loads as it is
// once uncommented: the secret APP_PASSWORD, on the site's host.
func TestStarterManifestOffersASecret(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("APP_PASSWORD", "starter-pw-51c0")
	s, err := readStarterSite("https://login.example.test/")
	if err != nil {
		t.Fatal(err)
	}
	doc := starterManifest(s)
	if !strings.Contains(doc, "# [secrets.APP_PASSWORD]") {
		t.Fatalf("the starter manifest has no commented [secrets] example:\n%s", doc)
	}
	var lines []string
	inSecret := false
	for line := range strings.SplitSeq(doc, "\n") {
		if strings.HasPrefix(line, "# [secrets.") {
			inSecret = true
		}
		if inSecret && strings.HasPrefix(line, "# ") {
			line = strings.TrimPrefix(line, "# ")
		}
		lines = append(lines, line)
	}
	m, err := toolclad.Parse("starter.toml", []byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatalf("the starter manifest with its [secrets] example uncommented does not load: %v", err)
	}
	if len(m.Secrets) != 1 || m.Secrets[0].Name != "APP_PASSWORD" || !slices.Equal(m.Secrets[0].Domains, []string{"login.example.test"}) ||
		m.Secrets[0].Value() != "starter-pw-51c0" {
		t.Errorf("the [secrets] example declares %v, want APP_PASSWORD on login.example.test", m.Secrets)
	}
}
