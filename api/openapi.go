package api

import (
	_ "embed"
	"net/http"
)

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document describing every endpoint the
// server has. A test in cmd/recon checks that every registered route is in it.
func OpenAPI() []byte { return openAPI }

// ServeOpenAPI serves the document.
func ServeOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPI)
}
