package evidence

import (
	"crypto/ed25519"
	"strings"
	"testing"
)

// BenchmarkLogHeadUpdate measures the work the log-wide head adds to an
// append besides bbolt's: taking the session's old head out of the set and
// putting the new one in (two SHAKE128 leaves), the set's digest, the
// encoding and, signed, the signature. Compare it with
// BenchmarkCanonicalJSON run beside it: on a busy machine absolute figures
// move together.
func BenchmarkLogHeadUpdate(b *testing.B) {
	for _, signed := range []bool{false, true} {
		name, key, keyID := "unsigned", ed25519.PrivateKey(nil), ""
		if signed {
			key = ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
			name, keyID = "signed", KeyID(key.Public().(ed25519.PublicKey))
		}
		b.Run(name, func(b *testing.B) {
			w := &logWriter{next: logState{set: &setState{}, head: logHead{N: 41, Sessions: 3, Records: 40}}}
			old := &head{Seq: 12, Hash: strings.Repeat("ab", 32)}
			b.ReportAllocs()
			for b.Loop() {
				w.appended("demo-20261122T074425-0fc94b6fc26a", old, 13, strings.Repeat("cd", 32))
				if _, _, err := w.seal(key, keyID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
