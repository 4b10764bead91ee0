package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/browsergate/browsergate/cedar"
	"github.com/browsergate/browsergate/executor"
	"github.com/browsergate/browsergate/toolclad"
)

// restoreConfig loads the recorded manifest, made safe to run on the
// auditor's machine, and writes the recorded policies into dir to load
// them.
func restoreConfig(dir string, cfg *executor.RecordedConfig, secrets map[string]string) (*toolclad.Manifest, *cedar.Engine, error) {
	pdir := filepath.Join(dir, "policies")
	if err := os.Mkdir(pdir, 0o700); err != nil {
		return nil, nil, err
	}
	for name, src := range cfg.Policies {
		if name != filepath.Base(name) || strings.HasPrefix(name, ".") {
			return nil, nil, fmt.Errorf("the recorded policy file name %q is not a plain file name", name)
		}
		if err := os.WriteFile(filepath.Join(pdir, name), []byte(src), 0o600); err != nil {
			return nil, nil, err
		}
	}
	// The replay's files are directories of its own, dropped with it: a
	// replay never writes where the session wrote, and never sends a file
	// of the auditor's machine (a log names its upload directory; a
	// foreign log could name ~/.ssh). Its uploads find nothing.
	scratch := filepath.Join(dir, "files")
	if err := os.Mkdir(scratch, 0o700); err != nil {
		return nil, nil, err
	}
	// A --secret whose variable or file is missing is the auditor's
	// flag's fault: said as such, before the manifest names it at a
	// position of its own.
	if err := checkSecretSources(secrets); err != nil {
		return nil, nil, err
	}
	source, err := safeManifest(cfg.Manifest.Source, secrets, scratch)
	if err != nil {
		return nil, nil, fmt.Errorf("the recorded manifest: %w", err)
	}
	m, err := toolclad.Parse(filepath.Base(cfg.Manifest.Path), source)
	if err != nil {
		return nil, nil, fmt.Errorf("the recorded manifest does not load here (is a --secret's variable or file missing?): %w", err)
	}
	engine, err := executor.LoadPolicies(pdir, []*toolclad.Manifest{m})
	if err != nil {
		return nil, nil, fmt.Errorf("the recorded policies do not load: %w", err)
	}
	return m, engine, nil
}

// safeManifest rewrites a recorded manifest for replay: connect = launch,
// headless, the default executable; each secret read from the auditor's
// mapping, and dropped when there is none; the upload and download
// directories both the empty directory scratch.
func safeManifest(src string, secrets map[string]string, scratch string) ([]byte, error) {
	var doc map[string]any
	if err := toml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, err
	}
	browser, _ := doc["browser"].(map[string]any)
	if browser == nil {
		browser = map[string]any{}
		doc["browser"] = browser
	}
	if browser["engine"] != toolclad.EngineHTTP {
		browser["connect"], browser["headless"] = "launch", true
	}
	delete(browser, "executable_path")
	delete(browser, "live_endpoint")
	if files, ok := browser["files"].(map[string]any); ok {
		for _, key := range []string{"download_dir", "upload_dir"} {
			if _, ok := files[key]; ok {
				files[key] = scratch
			}
		}
	}
	if recorded, ok := doc["secrets"].(map[string]any); ok {
		for name, v := range recorded {
			t, _ := v.(map[string]any)
			where, given := secrets[name]
			if t == nil || !given {
				delete(recorded, name)
				continue
			}
			delete(t, "env")
			delete(t, "file")
			kind, loc, _ := strings.Cut(where, ":")
			t[kind] = loc
		}
		if len(recorded) == 0 {
			delete(doc, "secrets")
		}
	}
	return toml.Marshal(doc)
}
