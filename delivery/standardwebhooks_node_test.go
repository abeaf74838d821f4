package delivery_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"recon"
	"recon/delivery"
	"recon/sqlstore"
)

// standardWebhooksNPM is the JavaScript Standard Webhooks library the test
// installs, outside the repository.
const standardWebhooksNPM = "standardwebhooks@1.1.1"

// verifyScript verifies each case of the JSON file argv[3] with the
// library installed under argv[2], at the case's time (Date.now set to it:
// the library reads the clock for its tolerance), and prints the outcomes.
const verifyScript = `
const path = require("path");
const fs = require("fs");
const { Webhook } = require(path.join(process.argv[2], "node_modules", "standardwebhooks"));
const cases = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const out = cases.map((c) => {
  Date.now = () => c.now * 1000;
  try {
    new Webhook(c.secret).verify(c.body, c.headers);
    return { ok: true, error: "" };
  } catch (e) {
    return { ok: false, error: String(e && e.message) };
  }
});
process.stdout.write(JSON.stringify(out));
`

// TestStandardWebhooksJSLibraryVerifiesDeliveries: the deliveries of
// runRotation, captured, verified by the npm package standardwebhooks
// through node. Without node and npm, or when npm cannot install the
// package, it skips loudly; RECON_TEST_REQUIRE_NODE=1 (CI) makes that a
// failure.
func TestStandardWebhooksJSLibraryVerifiesDeliveries(t *testing.T) {
	t.Parallel()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("RECON_TEST_REQUIRE_NODE") == "1" {
			t.Fatalf(format+" (RECON_TEST_REQUIRE_NODE=1)", args...)
		}
		t.Skipf("SKIPPED, the JavaScript Standard Webhooks library is not checked: "+format+" (set RECON_TEST_REQUIRE_NODE=1 to fail instead)", args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("no node on PATH")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		missing("no npm on PATH")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		missing("no cache directory: %v", err)
	}
	dir := filepath.Join(cache, "recon-test", "stdwh")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	install := exec.CommandContext(t.Context(), npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", standardWebhooksNPM)
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		missing("npm install %s into %s failed (is the npm registry reachable?): %v\n%s", standardWebhooksNPM, dir, err, out)
	}

	run := runRotation(t, sqlstore.EngineSQLite)
	type check struct {
		Secret  string            `json:"secret"`
		Body    string            `json:"body"`
		Headers map[string]string `json:"headers"`
		Now     int64             `json:"now"`
		want    bool
		what    string
	}
	var cases []check
	add := func(what string, r received, secret string, late int64, want bool) {
		ts, err := strconv.ParseInt(r.header.Get(delivery.HeaderTimestamp), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		headers := map[string]string{}
		for name := range r.header {
			headers[name] = r.header.Get(name) // as a receiver's framework hands them over: one value a name
		}
		cases = append(cases, check{Secret: recon.WhsecSecret(secret), Body: string(r.body), Headers: headers, Now: ts + late, want: want, what: what})
	}
	add("before, first attempt, old secret", run.before[0], run.oldSecret, 0, true)
	add("before, retry, old secret", run.before[1], run.oldSecret, 1, true)
	add("during, old secret", run.during[0], run.oldSecret, 2, true)
	add("during, new secret", run.during[0], run.newSecret, 2, true)
	add("after, new secret", run.after[0], run.newSecret, 0, true)
	add("after, old secret", run.after[0], run.oldSecret, 0, false)
	add("after, new secret, ten minutes late", run.after[0], run.newSecret, 600, false)
	add("during, new secret, another body", received{header: run.during[0].header, body: []byte(`{"forged":true}`)}, run.newSecret, 0, false)

	file := filepath.Join(t.TempDir(), "cases.json")
	script := filepath.Join(t.TempDir(), "verify.js")
	data, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(verifyScript), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), node, script, dir, file)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var got []struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || len(got) != len(cases) {
		t.Fatalf("node printed %q (%v); want %d outcomes", stdout.String(), err, len(cases))
	}
	for i, c := range cases {
		if got[i].OK != c.want {
			t.Errorf("%s: verified %v (%s), want %v", c.what, got[i].OK, got[i].Error, c.want)
		}
	}
}
