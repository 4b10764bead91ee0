package mask_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/toolclad"
)

// ExampleMasker_Mask: a secret is masked in the spellings a browser gives
// it, whole or in part.
func ExampleMasker_Mask() {
	dir, err := os.MkdirTemp("", "mask-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "pw"), []byte("k& 9<Q!x&a 7>z"), 0o600)
	os.WriteFile(filepath.Join(dir, "m.toml"), []byte(`
[tool]
name = "shop"
[browser.scope]
allowed_domains = ["*.example.com"]
[secrets.PW]
file = "pw"
domains = ["login.example.com"]
[browser.commands.type_text]
`), 0o600)
	man, err := toolclad.Load(filepath.Join(dir, "m.toml"))
	if err != nil {
		panic(err)
	}
	m := mask.FromManifests([]*toolclad.Manifest{man})
	fmt.Println(m.Mask("GET /f?p=k&%209%3CQ!x&a%207%3Ez"))    // a query as Chromium canonicalises it
	fmt.Println(m.Mask(`<input value="K&amp; 9&lt;q!X">`))    // a prefix, HTML-escaped, in another case
	fmt.Println(m.Mask("x&a 7: five characters are no part")) // too short to be masked
	// Output:
	// GET /f?p=[secret PW]
	// <input value="[part of secret PW]">
	// x&a 7: five characters are no part
}
