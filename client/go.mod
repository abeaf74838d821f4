module github.com/recon-vn/recon/client

// The Go SDK is a module of its own so that a shop fetches it without the
// server (docs/api.md, "The Go SDK as a module"): the standard library only,
// no requirement. The server module uses it through a replace directive
// (../go.mod).

go 1.25
