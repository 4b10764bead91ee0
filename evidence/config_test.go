package evidence_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/browsergate/browsergate/evidence"
)

const testConfig = `{"manifests":{"demo.toml":"[tool]\nname = \"demo\"\n"},"policies":{"base.cedar":"permit (principal, action, resource);"}}`

func TestPutConfigIsContentAddressed(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, nil)
	tests := []struct {
		name string
		data []byte
	}{
		{"manifest and policies", []byte(testConfig)},
		{"binary bytes", []byte{0, 1, 2, 0xff}},
		{"empty", []byte{}},
	}
	for _, tt := range tests {
		sum, err := s.PutConfig(tt.data)
		if err != nil {
			t.Fatalf("%s: PutConfig: %v", tt.name, err)
		}
		if sum != sha256hex(tt.data) {
			t.Errorf("%s: PutConfig = %s, want the SHA-256 of the data %s", tt.name, sum, sha256hex(tt.data))
		}
		again, err := s.PutConfig(bytes.Clone(tt.data))
		if err != nil || again != sum {
			t.Errorf("%s: second PutConfig = %s, %v; want %s", tt.name, again, err, sum)
		}
		got, err := s.Config(sum)
		if err != nil || !bytes.Equal(got, tt.data) {
			t.Errorf("%s: Config = %q, %v; want %q", tt.name, got, err, tt.data)
		}
	}
	for _, bad := range []string{"", "zz", strings.Repeat("0", 64), strings.ToUpper(sha256hex([]byte(testConfig)))} {
		if _, err := s.Config(bad); !errors.Is(err, evidence.ErrNoConfig) {
			t.Errorf("Config(%q) error = %v, want ErrNoConfig", bad, err)
		}
	}
}

func TestAppendChecksConfigReference(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, nil)
	sum, err := s.PutConfig([]byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	e := envelope("s1", "https://a.example.com/")
	e.ConfigSHA256 = sum
	if err := s.Append(e, nil); err != nil {
		t.Fatal(err)
	}
	recs, err := s.Records("s1")
	if err != nil || recs[0].ConfigSHA256 != sum {
		t.Fatalf("stored record: %+v, %v; want config_sha256 %s", recs, err, sum)
	}
	tests := []struct {
		name   string
		config string
		want   error
	}{
		{"blob never stored", sha256hex([]byte("another config")), evidence.ErrNoConfig},
		{"not a hash", "manifest.toml", evidence.ErrInvalidEnvelope},
		{"upper-case hex", strings.ToUpper(sum), evidence.ErrInvalidEnvelope},
	}
	for _, tt := range tests {
		e := envelope("s1", "https://a.example.com/")
		e.ConfigSHA256 = tt.config
		if err := s.Append(e, nil); !errors.Is(err, tt.want) {
			t.Errorf("%s: Append error = %v, want %v", tt.name, err, tt.want)
		}
	}
	if rep, err := s.Verify(); err != nil || !rep.OK() || rep.Records != 1 {
		t.Errorf("Verify: %+v, %v", rep, err)
	}
}

func TestPutConfigReadOnly(t *testing.T) {
	t.Parallel()
	s, path := openStore(t, nil)
	s.Close()
	ro, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.PutConfig([]byte(testConfig)); !errors.Is(err, evidence.ErrReadOnly) {
		t.Errorf("PutConfig on a read-only store: %v, want ErrReadOnly", err)
	}
}

// configFixture is a log whose records 1 and 2 of s1 name one config blob
// and whose record 1 of s2 names another; a third blob is stored but
// named by no record (a session that started and made no call).
func configFixture(t *testing.T) (path string, used, other, unused string) {
	t.Helper()
	s, path := openStore(t, nil)
	var err error
	if used, err = s.PutConfig([]byte(testConfig)); err != nil {
		t.Fatal(err)
	}
	if other, err = s.PutConfig([]byte(testConfig + " ")); err != nil {
		t.Fatal(err)
	}
	if unused, err = s.PutConfig([]byte("never used")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ session, config string }{{"s1", used}, {"s1", used}, {"s2", other}} {
		e := envelope(c.session, "https://a.example.com/")
		e.ConfigSHA256 = c.config
		if err := s.Append(e, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, used, other, unused
}

func TestVerifyChecksConfigBlobs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(tx *bolt.Tx, used, other, unused string) error
		want []wantProblem
		// blob is a problem about a blob no record names: its String.
		blob string
	}{
		{
			name: "intact, with a blob no record names",
			edit: func(*bolt.Tx, string, string, string) error { return nil },
		},
		{
			name: "blob deleted",
			edit: func(tx *bolt.Tx, used, _, _ string) error {
				return tx.Bucket([]byte("configs")).Delete([]byte(used))
			},
			want: []wantProblem{{"s1", 1, "missing"}, {"s1", 2, "missing"}},
		},
		{
			name: "blob altered",
			edit: func(tx *bolt.Tx, _, other, _ string) error {
				return tx.Bucket([]byte("configs")).Put([]byte(other), []byte(`{"policies":{}}`))
			},
			want: []wantProblem{{"s2", 1, "bytes do not match their hash"}},
		},
		{
			name: "blob no record names altered",
			edit: func(tx *bolt.Tx, _, _, unused string) error {
				return tx.Bucket([]byte("configs")).Put([]byte(unused), []byte("changed"))
			},
			blob: "config %s: bytes do not match their hash",
		},
		{
			name: "whole bucket removed",
			edit: func(tx *bolt.Tx, _, _, _ string) error {
				return tx.DeleteBucket([]byte("configs"))
			},
			want: []wantProblem{{"s1", 1, "missing"}, {"s2", 1, "missing"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, used, other, unused := configFixture(t)
			tamper(t, path, func(tx *bolt.Tx) error { return tt.edit(tx, used, other, unused) })
			s, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rep, err := s.Verify()
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.want) == 0 && tt.blob == "" {
				if !rep.OK() {
					t.Errorf("Verify: %q, want no problem", rep.Problems)
				}
				return
			}
			for _, w := range tt.want {
				if !hasProblem(rep, w) {
					t.Errorf("no problem session %s record %d: …%s…; got %q", w.session, w.seq, w.reason, rep.Problems)
				}
			}
			if tt.blob != "" {
				want := strings.ReplaceAll(tt.blob, "%s", unused)
				found := false
				for _, p := range rep.Problems {
					found = found || (strings.HasPrefix(p.String(), want) && p.Blob == evidence.BlobConfig)
				}
				if !found {
					t.Errorf("no problem %q; got %q", want, rep.Problems)
				}
			}
		})
	}
}

func TestPutConfigRefusesToRepairAlteredBlob(t *testing.T) {
	t.Parallel()
	path, used, _, _ := configFixture(t)
	tamper(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("configs")).Put([]byte(used), []byte("altered"))
	})
	s, err := evidence.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.PutConfig([]byte(testConfig)); !errors.Is(err, evidence.ErrCorrupt) {
		t.Errorf("PutConfig over an altered blob: %v, want ErrCorrupt", err)
	}
}
