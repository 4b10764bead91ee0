package replay

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// checkSecretSource says what is wrong with where an auditor's --secret
// NAME=env:VAR or NAME=file:PATH (source, as ParseSecret returns it) says
// this machine has a recorded secret: the variable is not set, or the
// file cannot be read. The error names the flag, which is where the
// auditor put the variable or the file, and not the recorded manifest,
// whose own source of the secret the replay drops.
func checkSecretSource(name, source string) error {
	kind, loc, _ := strings.Cut(source, ":")
	switch kind {
	case "env":
		if _, ok := os.LookupEnv(loc); !ok {
			return fmt.Errorf("--secret %s=%s: the environment variable %s is not set", name, source, loc)
		}
	case "file":
		f, err := os.Open(loc)
		if err != nil {
			return fmt.Errorf("--secret %s=%s: the file cannot be read: %v", name, source, err)
		}
		f.Close()
	}
	return nil
}

// checkSecretSources is checkSecretSource of each of the auditor's
// mappings, in the order of their names.
func checkSecretSources(secrets map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(secrets)) {
		if err := checkSecretSource(name, secrets[name]); err != nil {
			return err
		}
	}
	return nil
}
