package apiv2

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"slices"
	"sync"
)

// The OpenAPI 3.1 document of API v2, served at GET /v2/openapi.json. It is
// assembled from the files of openapi/: base.json holds the info, the
// security schemes and the shared schemas (the envelope, the error); every
// other file holds one area's "paths" and "components.schemas"
// (transactions.json, orders.json, refunds.json), so that areas written in
// parallel never edit the same file. A path or schema defined twice is an
// error (TestOpenAPI). TestEveryRouteDocumented (openapi_test.go) checks that
// every registered route is documented and every documented one served.

//go:embed openapi/*.json
var openAPIFiles embed.FS

var openAPI = sync.OnceValues(buildOpenAPI)

// OpenAPI returns the document (it panics if openapi/ does not assemble,
// which TestOpenAPI catches).
func OpenAPI() []byte {
	b, err := openAPI()
	if err != nil {
		panic(err)
	}
	return b
}

// ServeOpenAPI serves the document.
func ServeOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(OpenAPI())
}

func buildOpenAPI() ([]byte, error) {
	var doc map[string]any
	base, err := openAPIFiles.ReadFile("openapi/base.json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(base, &doc); err != nil {
		return nil, fmt.Errorf("openapi/base.json: %w", err)
	}
	paths := object(doc, "paths")
	schemas := object(object(doc, "components"), "schemas")
	names, err := fs.Glob(openAPIFiles, "openapi/*.json")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if name == "openapi/base.json" {
			continue
		}
		b, err := openAPIFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var part struct {
			Paths      map[string]any `json:"paths"`
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &part); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, p := range slices.Sorted(maps.Keys(part.Paths)) {
			if _, dup := paths[p]; dup {
				return nil, fmt.Errorf("%s: the path %s is defined twice", name, p)
			}
			paths[p] = part.Paths[p]
		}
		for _, s := range slices.Sorted(maps.Keys(part.Components.Schemas)) {
			if _, dup := schemas[s]; dup {
				return nil, fmt.Errorf("%s: the schema %s is defined twice", name, s)
			}
			schemas[s] = part.Components.Schemas[s]
		}
	}
	return json.MarshalIndent(doc, "", "  ")
}

// object returns m[key] as an object, made when missing.
func object(m map[string]any, key string) map[string]any {
	o, ok := m[key].(map[string]any)
	if !ok {
		o = map[string]any{}
		m[key] = o
	}
	return o
}
