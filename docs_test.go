package recon_test

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Paths a comment or a doc may name (docs/design.md, D11):
//   - repoPath: a relative path of two segments or more, such as
//     docs/api.md, sqlstore/match.go or cmd/recon; it is checked when its first
//     segment is a directory at the repository's root (from the root) or
//     beside the file that names it (from there, as Markdown links are);
//   - docName: a Markdown document named without a directory, such as
//     ARCHITECTURE.md, or a doc of docs/ that another links by its name alone:
//     at the root or beside the file;
//   - migrationRef: "migration 00022" (or "migrations 00012"), a file of
//     sqlstore/migrations/sqlite and of sqlstore/migrations/postgres.
//
// A path is taken only after a space, an opening bracket or quote, or at the
// start of a line, so URLs and routes (/api/v1/...) are not paths; one holding
// a pattern (*, {, …) is not checked.
var (
	repoPath     = regexp.MustCompile("(?:^|[\\s(\\[`\"'])((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.*{},…-]*[A-Za-z0-9_*}])")
	docName      = regexp.MustCompile("(?:^|[\\s(\\[`\"'])([A-Za-z][A-Za-z0-9_-]*\\.md)\\b")
	migrationRef = regexp.MustCompile(`\bmigrations? (\d{5})\b`)
)

// TestDocumentedPathsExist fails for every file path a Go comment, a
// Markdown document or a migration's comment names that does not exist in the repository, naming the
// file and line that names it.
func TestDocumentedPathsExist(t *testing.T) {
	root := repoRoot(t)
	var checked int
	walkDocLines(t, root, func(rel, dir string, l numberedLine) {
		for _, p := range pathsIn(l.text) {
			checked++
			if !pathExists(root, dir, p) {
				t.Errorf("%s:%d names %s, which does not exist", rel, l.n, p)
			}
		}
	})
	if checked < 100 { // the pattern must still find the paths the docs name
		t.Fatalf("only %d paths found in comments and docs", checked)
	}
}

// sectionRef is a Markdown document followed by the section it points at:
// `docs/api.md, "Who may do what"` (quoted: exactly a section's name or its
// first words) or `docs/api.md, Payment gateway` (not quoted: the text
// starts with a section's name, or is the start of one that a line break
// cut).
var sectionRef = regexp.MustCompile(`((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.md),? (?:"([^"]+)"|([A-Z][^\n]*))`)

// TestDocumentedSectionsExist fails for every reference to a section of a
// Markdown document that has no such section: a heading (without its
// parenthesised tail, and "D7" for "D7. Notifications...") or a paragraph's
// bold lead ("**Order.**").
func TestDocumentedSectionsExist(t *testing.T) {
	root := repoRoot(t)
	sections := map[string][]string{}
	var checked int
	walkDocLines(t, root, func(rel, dir string, l numberedLine) {
		for _, m := range sectionRef.FindAllStringSubmatch(l.text, -1) {
			doc, quoted, text := m[1], m[2], strings.ReplaceAll(m[3], "`", "")
			path := filepath.Join(root, filepath.FromSlash(doc))
			if !exists(path) {
				if path = filepath.Join(dir, filepath.FromSlash(doc)); !exists(path) {
					continue // TestDocumentedPathsExist reports it
				}
			}
			quoted = strings.ReplaceAll(quoted, "`", "")
			if quoted == "" && strings.ContainsAny(strings.TrimRight(strings.Fields(text)[0], ".,;:)"), "/.") {
				continue // another path, not a section: "README.md, ARCHITECTURE.md"
			}
			if sections[path] == nil {
				sections[path] = docSections(t, path)
			}
			checked++
			if !hasSection(sections[path], quoted, strings.TrimRight(text, " .,;:)")) {
				t.Errorf("%s:%d names a section of %s that it does not have: %s", rel, l.n, doc, m[0])
			}
		}
	})
	if checked < 50 {
		t.Fatalf("only %d section references found in comments and docs", checked)
	}
}

var (
	heading  = regexp.MustCompile(`^#+\s+(.*?)\s*$`)
	boldLead = regexp.MustCompile(`^\*\*([^*]+?)\.?\*\*`)
	numbered = regexp.MustCompile(`^(D\d+)\. `)
	tail     = regexp.MustCompile(`\s*\([^()]*\)$`)
)

// docSections lists the names a reference may give a section of the
// document at path.
func docSections(t *testing.T, path string) []string {
	lines, err := fileLines(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range lines {
		var name string
		if m := heading.FindStringSubmatch(l.text); m != nil {
			name = m[1]
		} else if m := boldLead.FindStringSubmatch(l.text); m != nil {
			name = m[1]
		} else {
			continue
		}
		name = strings.ReplaceAll(name, "`", "")
		out = append(out, name, tail.ReplaceAllString(name, ""))
		if m := numbered.FindStringSubmatch(name); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

func hasSection(sections []string, quoted, text string) bool {
	for _, s := range sections {
		switch {
		case quoted != "":
			if s == quoted || strings.HasPrefix(s, quoted+" ") {
				return true
			}
		case text == s || strings.HasPrefix(s, text+" "):
			return true // the whole name, or its start before a line break
		case strings.HasPrefix(text, s):
			if r := text[len(s)]; !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
				return true
			}
		}
	}
	return false
}

func repoRoot(t *testing.T) string {
	root, err := os.Getwd() // the root package's directory: the repository's root
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// walkDocLines calls fn with every line of a Go comment, of a Markdown
// document and of a migration's comment under root, with the file's path from root and its directory.
func walkDocLines(t *testing.T, root string, fn func(rel, dir string, l numberedLine)) {
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		var lines []numberedLine
		switch {
		case strings.HasSuffix(name, ".go"):
			lines, err = goCommentLines(path)
		case strings.HasSuffix(name, ".md"):
			lines, err = fileLines(path)
		case strings.HasSuffix(name, ".sql"):
			lines, err = sqlCommentLines(path)
		default:
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, l := range lines {
			fn(rel, filepath.Dir(path), l)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type numberedLine struct {
	n    int
	text string
}

// goCommentLines returns the lines of a Go file's comments.
func goCommentLines(path string) ([]numberedLine, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []numberedLine
	for _, g := range f.Comments {
		for _, c := range g.List {
			first := fset.Position(c.Pos()).Line
			for i, text := range strings.Split(c.Text, "\n") {
				out = append(out, numberedLine{first + i, text})
			}
		}
	}
	return out, nil
}

// sqlCommentLines returns the comments of a migration: what follows "--".
func sqlCommentLines(path string) ([]numberedLine, error) {
	lines, err := fileLines(path)
	var out []numberedLine
	for _, l := range lines {
		if _, c, ok := strings.Cut(l.text, "--"); ok && !strings.HasPrefix(c, " +goose") {
			out = append(out, numberedLine{l.n, c})
		}
	}
	return out, err
}

func fileLines(path string) ([]numberedLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []numberedLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		out = append(out, numberedLine{n, sc.Text()})
	}
	return out, sc.Err()
}

// pathsIn returns the paths a line names: repository paths, documents and
// migrations (as "migration:NNNNN").
func pathsIn(line string) []string {
	var out []string
	for _, m := range repoPath.FindAllStringSubmatch(line, -1) {
		p := strings.TrimRight(m[1], ".")
		if rest, ok := strings.CutPrefix(p, "./"); ok && !strings.Contains(rest, "/") {
			continue // a file in the working directory (./recon.db), not in the repository
		}
		if strings.ContainsAny(p, "*{}…") || strings.Contains(p, "...") || strings.Contains(p, "//") {
			continue
		}
		out = append(out, p)
	}
	for _, m := range docName.FindAllStringSubmatch(line, -1) {
		out = append(out, m[1])
	}
	for _, m := range migrationRef.FindAllStringSubmatch(line, -1) {
		out = append(out, "migration:"+m[1])
	}
	return out
}

// pathExists says whether p, as pathsIn returns it, exists. A repository
// path whose first segment is a directory neither at the root nor in dir
// (an import path, a MIME type, a route) is not a path of this repository
// and counts as existing.
func pathExists(root, dir, p string) bool {
	if n, ok := strings.CutPrefix(p, "migration:"); ok {
		for _, engine := range []string{"sqlite", "postgres"} {
			m, _ := filepath.Glob(filepath.Join(root, "sqlstore", "migrations", engine, n+"_*.sql"))
			if len(m) != 1 {
				return false
			}
		}
		return true
	}
	if !strings.Contains(p, "/") {
		return exists(filepath.Join(root, p)) || exists(filepath.Join(dir, p))
	}
	first, _, _ := strings.Cut(p, "/")
	bases := []string{root, dir}
	if first == ".." {
		bases = []string{dir}
	}
	// A path names a file below the root or below the naming file's folder
	// (a Markdown link in a document of docs/ names a file beside it);
	// it is checked where its first folder exists, and found if either has it.
	named := false
	for _, base := range bases {
		if isDir(filepath.Join(base, first)) {
			if exists(filepath.Join(base, filepath.FromSlash(p))) {
				return true
			}
			named = true
		}
	}
	return !named
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func isDir(path string) bool { fi, err := os.Stat(path); return err == nil && fi.IsDir() }

// TestPathsIn holds the pattern to what it must and must not take.
func TestPathsIn(t *testing.T) {
	for line, want := range map[string]string{
		"see docs/api.md, Errors":                                       "[docs/api.md]",
		"(sqlstore/match.go) and `cmd/recon/keys.go`.":                  "[sqlstore/match.go cmd/recon/keys.go]",
		"[docs/hub.md](docs/hub.md)":                                    "[docs/hub.md docs/hub.md]",
		"ARCHITECTURE.md, \"Test mode\"; [hub](hub.md)":                 "[ARCHITECTURE.md hub.md]",
		"migration 00022 and migrations 00012":                          "[migration:00022 migration:00012]",
		"go run ./cmd/recon serve on ./recon.db":                        "[./cmd/recon]",
		"GET /api/v1/company at http://127.0.0.1:8080/x":                "[]",
		"sqlstore hub*.go and migrations/{sqlite,postgres}/ and docs/…": "[]",
	} {
		if got := fmt.Sprint(pathsIn(line)); got != want {
			t.Errorf("pathsIn(%q) = %s, want %s", line, got, want)
		}
	}
}

// TestHasSection holds the section match to what it must and must not take.
func TestHasSection(t *testing.T) {
	sections := []string{"Payment gateway (§4.6)", "Payment gateway", "Order", "D7. Notifications", "D7"}
	for _, c := range []struct {
		quoted, text string
		want         bool
	}{
		{"", "Payment gateway), in the", true},
		{"", "Payment", true}, // cut by a line break
		{"", "Payment gateways", false},
		{"", "Payments", false},
		{"Order", "", true},
		{"Orders", "", false},
		{"", "D7, D10", true},
		{"", "D1", false},
		{"", "Security", false},
	} {
		if got := hasSection(sections, c.quoted, c.text); got != c.want {
			t.Errorf("hasSection(%q, %q) = %v, want %v", c.quoted, c.text, got, c.want)
		}
	}
}
