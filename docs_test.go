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

// TestDocumentedPathsExist fails for every file path a Go comment or a
// Markdown document names that does not exist in the repository, naming the
// file and line that names it.
func TestDocumentedPathsExist(t *testing.T) {
	root, err := os.Getwd() // the root package's directory: the repository's root
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
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
		default:
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, l := range lines {
			for _, p := range pathsIn(l.text) {
				checked++
				if !pathExists(root, filepath.Dir(path), p) {
					t.Errorf("%s:%d names %s, which does not exist", rel, l.n, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 { // the pattern must still find the paths the docs name
		t.Fatalf("only %d paths found in comments and docs", checked)
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
	for _, base := range []string{root, dir} {
		if isDir(filepath.Join(base, first)) {
			return exists(filepath.Join(base, filepath.FromSlash(p)))
		}
	}
	return true
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
