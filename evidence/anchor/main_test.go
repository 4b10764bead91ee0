package anchor_test

import (
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

// TestMain quiets Tessera's logging (klog, to stderr by default), whose
// lines would otherwise land in the middle of benchmark results.
func TestMain(m *testing.M) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}
