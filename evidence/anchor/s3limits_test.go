package anchor_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/browsergate/browsergate/evidence/anchor"
)

// TestBucketReadsAreBounded: a checkpoint, a tile or an entry bundle put
// in the bucket larger than its kind may be is refused, naming its key,
// and not read whole.
func TestBucketReadsAreBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := lockedBucket(t, testBucket)
	bucket := anchor.BucketSource{Client: c, Bucket: testBucket}
	putObject(t, c, testBucket, "checkpoint", bytes.Repeat([]byte("x"), anchor.MaxCheckpointBytes+1))
	putObject(t, c, testBucket, "tile/0/000", bytes.Repeat([]byte("x"), anchor.MaxTileBytes+1))
	putObject(t, c, testBucket, "tile/entries/000", bytes.Repeat([]byte("x"), anchor.MaxEntryBundleBytes+1))
	for key, read := range map[string]func() ([]byte, error){
		"checkpoint":       func() ([]byte, error) { return bucket.ReadCheckpoint(ctx) },
		"tile/0/000":       func() ([]byte, error) { return bucket.ReadTile(ctx, 0, 0, 0) },
		"tile/entries/000": func() ([]byte, error) { return bucket.ReadEntryBundle(ctx, 0, 0) },
	} {
		raw, err := read()
		if !errors.Is(err, anchor.ErrObjectTooLarge) || !strings.Contains(err.Error(), key) {
			t.Errorf("read %s: %d bytes, %v; want ErrObjectTooLarge naming the key", key, len(raw), err)
		}
	}
	if _, err := bucket.Checkpoints(ctx); !errors.Is(err, anchor.ErrObjectTooLarge) {
		t.Errorf("the checkpoint's versions: %v, want ErrObjectTooLarge", err)
	}
	// Objects as large as they may be are read.
	putObject(t, c, testBucket, "tile/0/001", bytes.Repeat([]byte("x"), anchor.MaxTileBytes))
	if raw, err := bucket.ReadTile(ctx, 0, 1, 0); err != nil || len(raw) != anchor.MaxTileBytes {
		t.Errorf("a tile of %d bytes: %d read, %v", anchor.MaxTileBytes, len(raw), err)
	}
}

// TestS3ClientGivesUpOnABucketThatNeverAnswers: a service that accepts
// connections and never answers fails the call (the response timeout)
// instead of holding it; the caller's context has no deadline.
func TestS3ClientGivesUpOnABucketThatNeverAnswers(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, conn) // read nothing, answer nothing
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	c := anchor.NewS3Client(anchor.S3Config{Endpoint: "http://" + ln.Addr().String(), AccessKey: "k", SecretKey: "s",
		ResponseTimeout: 200 * time.Millisecond})
	bucket := anchor.BucketSource{Client: c, Bucket: testBucket}
	ctx := context.Background()
	if _, err := bucket.ReadCheckpoint(ctx); err == nil {
		t.Fatal("read from a bucket that never answers succeeded")
	} else {
		t.Logf("read from a bucket that never answers: %v", err)
	}
}
