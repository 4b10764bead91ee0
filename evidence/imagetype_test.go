package evidence_test

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/browsergate/browsergate/evidence"
)

// TestImageTypeIsSniffedFromTheBytes: a screenshot's type comes from its
// own bytes (PNG, JPEG, WebP), and bytes that are not an image have none,
// so neither the report nor the console serves them as one.
func TestImageTypeIsSniffedFromTheBytes(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	var p, j bytes.Buffer
	if err := png.Encode(&p, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&j, img, nil); err != nil {
		t.Fatal(err)
	}
	// The header of a lossy WebP file (RIFF, its size, WEBP, VP8 chunk).
	webp := append([]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), make([]byte, 24)...)
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"png", p.Bytes(), "image/png"},
		{"jpeg", j.Bytes(), "image/jpeg"},
		{"webp", webp, "image/webp"},
		{"html", []byte("<html><script>alert(1)</script>"), ""},
		{"empty", nil, ""},
	} {
		if got := evidence.ImageType(c.b); got != c.want {
			t.Errorf("ImageType(%s) = %q, want %q", c.name, got, c.want)
		}
	}
}
