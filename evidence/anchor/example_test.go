package anchor_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"

	"github.com/browsergate/browsergate/evidence/anchor"
	"golang.org/x/mod/sumdb/note"
)

// The anchorer appends records' leaves and takes the checkpoint that
// covers them; an auditor checks the log's files with the public key.
func Example() {
	ctx := context.Background()
	skey, vkey, _ := note.GenerateKey(rand.Reader, "browsergate.example/fleet-log")
	signer, _ := note.NewSigner(skey)
	dir, _ := os.MkdirTemp("", "fleet-log-")
	defer os.RemoveAll(dir)

	log, err := anchor.Open(ctx, anchor.Config{Dir: dir, Signer: signer})
	if err != nil {
		panic(err)
	}
	indices, _ := log.Append(ctx, [][]byte{
		[]byte(`{"hash":"9f2c…","log":"r1","seq":1,"session":"s-1"}`),
		[]byte(`{"hash":"41d0…","log":"r1","seq":2,"session":"s-1"}`),
	})
	checkpoint, _ := log.Checkpoint(ctx)
	_ = log.Close(ctx)
	fmt.Println("indices:", indices)
	lines := strings.SplitN(string(checkpoint), "\n", 3)
	fmt.Println("checkpoint:", lines[0], "size", lines[1])

	v, _ := anchor.NewVerifier(vkey)
	cp, err := v.Audit(ctx, anchor.DirSource(dir), anchor.AuditOptions{
		Leaf: func(i uint64, leaf []byte) error { fmt.Printf("leaf %d: %s\n", i, leaf); return nil },
	})
	fmt.Println(cp, err)
	// Output:
	// indices: [0 1]
	// checkpoint: browsergate.example/fleet-log size 2
	// leaf 0: {"hash":"9f2c…","log":"r1","seq":1,"session":"s-1"}
	// leaf 1: {"hash":"41d0…","log":"r1","seq":2,"session":"s-1"}
	// checkpoint of size 2 <nil>
}
