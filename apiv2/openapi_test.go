package apiv2

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"recon/sqlstore/dbtest"
	"recon/web"
)

// TestEveryRouteDocumented checks the routes Register adds against the
// OpenAPI document assembled from openapi/ (openapi.go), both ways: a route
// added without its document, or a path documented and not served, fails.
// (cmd/recon's TestEveryRouteDocumented checks the whole server.)
func TestEveryRouteDocumented(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	mux := web.NewMux()
	New(Config{Store: dbtest.OpenStore(t, "sqlite")}).Register(mux)
	var patterns []string
	for _, p := range mux.Patterns() {
		method, path, _ := strings.Cut(p, " ")
		if !strings.HasPrefix(path, "/v2/") && !slices.ContainsFunc(invoiceFamilies, func(f string) bool { return strings.HasPrefix(path, f) }) {
			t.Errorf("apiv2 registers %q, outside /v2/ and the invoice paths", p)
		}
		patterns = append(patterns, p)
		if _, ok := doc.Paths[path][strings.ToLower(method)]; !ok {
			t.Errorf("route %q is not documented: add it to a file of apiv2/openapi/", p)
		}
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			if p := strings.ToUpper(method) + " " + path; !slices.Contains(patterns, p) {
				t.Errorf("apiv2/openapi/ documents %q, which is not served", p)
			}
		}
	}
}

// TestOpenAPI checks that the files of openapi/ assemble (no path or schema
// defined twice) and that every $ref names something the document defines.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	b, err := buildOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				var at any = doc
				for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
					m, _ := at.(map[string]any)
					at = m[part]
				}
				if at == nil {
					t.Errorf("$ref %q names nothing", ref)
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
}
