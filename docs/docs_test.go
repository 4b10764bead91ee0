// Package docs holds the test that keeps the manual honest: the
// architecture table lists every package, every relative link and anchor
// of README.md and docs/ leads somewhere, and every test, benchmark and
// fuzz target the manual names exists. A renamed package, heading, file or
// test fails here instead of leaving a reader at a dead end.
package docs

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, seen from this directory (go test runs a
// package's tests in its own directory).
const root = ".."

// manual lists README.md and every Markdown file of docs/, relative to root.
func manual(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range docs {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// skipDir says whether a directory is outside the code the manual
// describes: version control, hidden tool directories (.ci, .peers),
// test data and installed node modules.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules"
}

// goPackages returns every directory under root that holds a non-test .go
// file, relative to root ("executor/web"). Nested modules (cmd/peerbench)
// count: they are part of the tree a newcomer opens.
func goPackages(t *testing.T) map[string]bool {
	t.Helper()
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			dirs[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// codeFence matches the line that opens or closes a fenced code block.
var codeFence = regexp.MustCompile("^\\s*(```|~~~)")

// prose returns the lines of a Markdown file outside fenced code blocks,
// each with its inline code spans blanked out, so that text shown as code
// (a JSON snippet, `[state]`) is not read as a link or a heading. Lines
// keep their numbers: a blanked line is empty.
func prose(text string) []string {
	lines := strings.Split(text, "\n")
	out := make([]string, len(lines))
	inFence := false
	for i, line := range lines {
		if codeFence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		out[i] = blankCode(line)
	}
	return out
}

// blankCode replaces each inline code span of a line by spaces.
func blankCode(line string) string {
	var b strings.Builder
	inCode := false
	for _, r := range line {
		if r == '`' {
			inCode = !inCode
			b.WriteRune(' ')
			continue
		}
		if inCode {
			b.WriteRune(' ')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// architectureRows returns the first cell of every row of the table under
// architecture.md's "Packages" heading: each names one directory, in
// backticks.
func architectureRows(t *testing.T) []string {
	t.Helper()
	text := read(t, "docs/architecture.md")
	sc := bufio.NewScanner(strings.NewReader(text))
	var rows []string
	inSection, inTable := false, false
	cell := regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|")
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			if inSection {
				break
			}
			inSection = strings.TrimSpace(strings.TrimPrefix(line, "## ")) == "Packages"
			continue
		}
		if !inSection {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		if m := cell.FindStringSubmatch(line); m != nil {
			rows = append(rows, strings.TrimSuffix(m[1], "/"))
		}
	}
	if len(rows) == 0 {
		t.Fatal(`docs/architecture.md: no table of packages under "## Packages"`)
	}
	return rows
}

// TestArchitectureTableListsEveryPackage checks that the architecture
// table has a row for every directory holding Go code, and that every row
// names a directory that exists: a package added or moved without its row
// fails here.
func TestArchitectureTableListsEveryPackage(t *testing.T) {
	rows := architectureRows(t)
	listed := map[string]bool{}
	for _, r := range rows {
		if listed[r] {
			t.Errorf("docs/architecture.md: %s has two rows", r)
		}
		listed[r] = true
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(r)))
		if err != nil || !info.IsDir() {
			t.Errorf("docs/architecture.md: row %s names no directory of the repository", r)
		}
	}
	var missing []string
	for dir := range goPackages(t) {
		if !listed[dir] {
			missing = append(missing, dir)
		}
	}
	sort.Strings(missing)
	for _, dir := range missing {
		t.Errorf("docs/architecture.md: package directory %s has no row in the Packages table", dir)
	}
}

// mdLink matches an inline Markdown link or image, capturing its target
// (up to a space, which starts a title, or the closing parenthesis).
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// refLink matches a reference-style link definition: "[name]: target".
var refLink = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*(\S+)`)

// headingLine matches an ATX heading.
var headingLine = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)

// anchors returns the anchors GitHub gives the headings of a Markdown
// file: the heading's text, lower-cased, with its punctuation dropped and
// its spaces turned into hyphens; a repeated anchor gets -1, -2, ….
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	lines := strings.Split(text, "\n")
	inFence := false
	for _, line := range lines {
		if codeFence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// linkText keeps the text of the links in a heading ("[x](y)" reads "x").
var linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// slug is GitHub's anchor of a heading's text: lower case, letters,
// digits, hyphens and underscores kept, spaces turned into hyphens, and
// every other character (punctuation, backticks) dropped.
func slug(heading string) string {
	heading = linkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestManualLinksResolve checks every relative link of README.md and
// docs/*.md: its file (or directory) exists, and its #anchor is a heading
// of the Markdown file it points into.
func TestManualLinksResolve(t *testing.T) {
	headings := map[string]map[string]bool{}
	anchorsOf := func(rel string) map[string]bool {
		if a, ok := headings[rel]; ok {
			return a
		}
		a := anchors(read(t, rel))
		headings[rel] = a
		return a
	}
	for _, file := range manual(t) {
		for i, line := range prose(read(t, file)) {
			var targets []string
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				targets = append(targets, m[1])
			}
			if m := refLink.FindStringSubmatch(line); m != nil {
				targets = append(targets, m[1])
			}
			for _, target := range targets {
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				where, fragment, _ := strings.Cut(target, "#")
				dest := file
				if where != "" {
					dest = path.Clean(path.Join(path.Dir(file), where))
					if strings.HasPrefix(dest, "../") {
						t.Errorf("%s:%d: link %s leaves the repository", file, i+1, target)
						continue
					}
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
						t.Errorf("%s:%d: link %s: no such file %s", file, i+1, target, dest)
						continue
					}
				}
				if fragment == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if !anchorsOf(dest)[fragment] {
					t.Errorf("%s:%d: link %s: %s has no heading with anchor #%s", file, i+1, target, dest, fragment)
				}
			}
		}
	}
}

// testName matches the name of a test, benchmark or fuzz target as the
// manual writes it.
var testName = regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z0-9_][A-Za-z0-9_]*`)

// testFunc matches the declaration of one in a _test.go file.
var testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)\(`)

// testFuncs returns every test, benchmark and fuzz target of the tree, by
// the directory (relative to root) that declares it.
func testFuncs(t *testing.T) map[string]map[string]bool {
	t.Helper()
	byDir := map[string]map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(rel)
		for _, m := range testFunc.FindAllStringSubmatch(string(b), -1) {
			if byDir[dir] == nil {
				byDir[dir] = map[string]bool{}
			}
			byDir[dir][m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return byDir
}

// TestManualNamesExistingTests checks that every test, benchmark and fuzz
// target the manual names is declared somewhere in the tree, so that a
// renamed test cannot leave its old name behind as evidence for a claim.
func TestManualNamesExistingTests(t *testing.T) {
	all := map[string]bool{}
	for _, names := range testFuncs(t) {
		for n := range names {
			all[n] = true
		}
	}
	for _, file := range manual(t) {
		for i, line := range strings.Split(read(t, file), "\n") {
			for _, name := range testName.FindAllString(line, -1) {
				if !all[name] {
					t.Errorf("%s:%d: %s is no test, benchmark or fuzz target of the tree", file, i+1, name)
				}
			}
		}
	}
}

// benchCommand matches a "go test ./pkg ... -bench PATTERN" command as the
// manual quotes it (the pattern bare or in single quotes).
var benchCommand = regexp.MustCompile(`go test (\./[A-Za-z0-9_/.-]+)[^` + "`" + `]*?-bench (?:'([^']+)'|([^\s` + "`" + `']+))`)

// TestManualBenchCommandsRunBenchmarks checks that every benchmark command
// the manual gives to reproduce a figure selects at least one benchmark of
// the package it names: a renamed benchmark would otherwise make the
// command run nothing and print no figure at all.
func TestManualBenchCommandsRunBenchmarks(t *testing.T) {
	funcs := testFuncs(t)
	for _, file := range manual(t) {
		for i, line := range strings.Split(read(t, file), "\n") {
			for _, m := range benchCommand.FindAllStringSubmatch(line, -1) {
				dir := strings.TrimPrefix(path.Clean(m[1]), "./")
				pattern := m[2]
				if pattern == "" {
					pattern = m[3]
				}
				// A Markdown table escapes the regular expression's bar.
				pattern = strings.ReplaceAll(pattern, `\|`, "|")
				top := topLevel(pattern)
				re, err := regexp.Compile(top)
				if err != nil {
					t.Errorf("%s:%d: -bench %q: %v", file, i+1, pattern, err)
					continue
				}
				if dir == "..." || strings.HasSuffix(dir, "/...") {
					continue
				}
				found := false
				for name := range funcs[dir] {
					if strings.HasPrefix(name, "Benchmark") && re.MatchString(name) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("%s:%d: go test ./%s -bench %q selects no benchmark of %s", file, i+1, dir, pattern, dir)
				}
			}
		}
	}
}

// topLevel returns the part of a -bench pattern that go test matches
// against the benchmark's own name: what comes before the first slash
// outside brackets and parentheses (the rest selects sub-benchmarks).
func topLevel(pattern string) string {
	depth := 0
	for i, r := range pattern {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '/':
			if depth == 0 {
				return pattern[:i]
			}
		}
	}
	return pattern
}

// repoPath matches a path in backticks that starts with a top-level
// directory of the repository and names a file by its extension.
var repoPath = regexp.MustCompile("`((?:approval|cedar|cmd|daemon|docs|events|evidence|examples|executor|gate|internal|policies|scope|toolclad)/[A-Za-z0-9_./-]+\\.(?:go|js|md|toml|cedar|cedarschema|json|service|txt|html))`")

// TestManualNamesExistingFiles checks that every file of the repository
// the manual names in backticks (`executor/table.go`) exists: files move,
// and a reader sent to one that is gone is lost.
func TestManualNamesExistingFiles(t *testing.T) {
	for _, file := range manual(t) {
		for i, line := range strings.Split(read(t, file), "\n") {
			for _, m := range repoPath.FindAllStringSubmatch(line, -1) {
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m[1]))); err != nil {
					t.Errorf("%s:%d: %s: no such file", file, i+1, m[1])
				}
			}
		}
	}
}
