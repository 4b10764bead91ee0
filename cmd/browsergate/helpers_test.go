package main

import (
	"github.com/browsergate/browsergate/examples/quickstart"
)

// findRef returns the ref on the first snapshot line containing text.
var findRef = quickstart.FindRef

// resultText is the text of a tool result.
var resultText = quickstart.ResultText

// serveOn serves h on addr and returns its base URL.
var serveOn = quickstart.ServeOn
