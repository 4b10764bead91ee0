package ring

import "testing"

// Test files are not among the files counted.
func TestRun(t *testing.T) { _ = run() }
