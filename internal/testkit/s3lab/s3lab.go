// Package s3lab starts an S3 service for tests: versitygw (an S3 gateway,
// built outside browsergate's module by .ci/versitygw) on 127.0.0.1, with
// its POSIX backend in a temporary directory and bucket versioning on, so
// that buckets can be created with Object Lock and the gateway enforces
// it. A test gets the endpoint and the root account's keys; the service
// stops when the test ends. It is imported only by _test.go files.
package s3lab

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Lab is one running versitygw.
type Lab struct {
	// Endpoint is the service's base URL: http://127.0.0.1:PORT. Buckets
	// are addressed by path (http://127.0.0.1:PORT/bucket/key).
	Endpoint string
	// AccessKey and SecretKey are the root account's credentials.
	AccessKey, SecretKey string
	// Region is the region the service signs for.
	Region string
	// Dir is the backend's directory: each bucket a directory below it.
	Dir string

	cmd  *exec.Cmd
	done chan error
}

// repoRoot is the repository's root, seen from this file.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Binary returns the path of the versitygw that .ci/versitygw installed,
// or why there is none.
func Binary() (string, error) {
	out, err := exec.Command("bash", filepath.Join(repoRoot(), ".ci", "versitygw"), "path").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s", strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// Start starts versitygw for t and returns once it accepts connections.
// It skips t when versitygw is not installed (bash .ci/versitygw install,
// which make test runs), and stops the service when t ends.
func Start(t testing.TB) *Lab {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Skipf("versitygw is not installed: %v", err)
	}
	dir := t.TempDir()
	l := &Lab{AccessKey: "s3lab-access", SecretKey: "s3lab-secret-key-0123456789", Region: "us-east-1",
		Dir: filepath.Join(dir, "buckets"), done: make(chan error, 1)}
	versions := filepath.Join(dir, "versions")
	for _, d := range []string{l.Dir, versions} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	l.Endpoint = "http://" + addr
	logPath := filepath.Join(dir, "versitygw.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// --versioning-dir turns bucket versioning on, which Object Lock needs;
	// the access and secret keys are the root account's (single account
	// mode: no IAM service).
	l.cmd = exec.Command(bin, "--port", addr, "--access", l.AccessKey, "--secret", l.SecretKey,
		"--region", l.Region, "--quiet", "posix", "--versioning-dir", versions, l.Dir)
	l.cmd.Stdout, l.cmd.Stderr = logFile, logFile
	l.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := l.cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start versitygw: %v", err)
	}
	go func() {
		l.done <- l.cmd.Wait()
		logFile.Close()
	}()
	t.Cleanup(l.Stop)
	if err := l.waitReady(addr, 20*time.Second); err != nil {
		out, _ := os.ReadFile(logPath)
		t.Fatalf("versitygw did not start: %v\n%s", err, bytes.TrimSpace(out))
	}
	return l
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// waitReady waits until the service accepts a connection, or it exits.
func (l *Lab) waitReady(addr string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-l.done:
			l.done <- err
			return fmt.Errorf("versitygw exited: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("nothing listens on %s after %v", addr, limit)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop stops the service (SIGTERM, then SIGKILL after 5 s) and waits for
// it. Stopping a stopped Lab does nothing.
func (l *Lab) Stop() {
	if l.cmd == nil || l.cmd.Process == nil {
		return
	}
	select {
	case err := <-l.done:
		l.done <- err
		return
	default:
	}
	_ = l.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-l.done:
		l.done <- err
	case <-time.After(5 * time.Second):
		_ = l.cmd.Process.Kill()
		l.done <- <-l.done
	}
}
