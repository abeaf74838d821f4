package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// runEnv runs recon in-process with exactly the environment env.
func runEnv(env map[string]string, args ...string) (string, error) {
	var out bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &bytes.Buffer{})
	return out.String(), err
}

func runJSON(t *testing.T, env map[string]string, args ...string) map[string]any {
	t.Helper()
	out, err := runEnv(env, append(args, "--json")...)
	if err != nil {
		t.Fatalf("recon %s: %v", strings.Join(args, " "), err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("recon %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

// TestSecretKeyCommands: every command finds the key the same way; SQLite
// makes it beside the database; PostgreSQL refuses to start without one;
// recon keys rotate re-seals and the CLI and server keep working.
func TestSecretKeyCommands(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		dbURL := dbtest.NewURL(t, engine)
		env := map[string]string{"RECON_DATABASE_URL": dbURL}
		keyFile := strings.TrimPrefix(dbURL, "sqlite:") + ".key"
		if engine == "postgres" {
			want := "a PostgreSQL database needs its secret key given explicitly, the same on every node: --secret-key-file PATH (env RECON_SECRET_KEY_FILE) or RECON_SECRET_KEY"
			for _, args := range [][]string{{"migrate"}, {"serve", "--addr", "127.0.0.1:0"}, {"merchant", "credentials", "--company", "1"}} {
				if _, err := runEnv(env, args...); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("recon %s without a key: %v, want %q", strings.Join(args, " "), err, want)
				}
			}
			keyFile = filepath.Join(t.TempDir(), "secret.key")
			env["RECON_SECRET_KEY_FILE"] = keyFile
		}
		company := fmt.Sprint(runJSON(t, env, "company", "create", "--full-name", "Công ty A", "--short-name", "A")["id"])
		fi, err := os.Stat(keyFile)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("key file %s: %v, %v; want it made with mode 0600", keyFile, fi, err)
		}
		creds := runJSON(t, env, "merchant", "credentials", "--company", company)
		secret, _ := creds["secret_key"].(string)
		if len(secret) != recon.SecretLen || strings.Trim(secret, alnumChars) != "" {
			t.Fatalf("merchant secret %q: want %d letters and digits (recon.NewSecret)", secret, recon.SecretLen)
		}
		ipn := runJSON(t, env, "ipn", "set", "--company", company, "--url", "https://shop.example.vn/ipn")
		ipnSecret, signing := ipn["secret_key"].(string), ipn["signing_secret"].(string)
		if len(ipnSecret) != recon.SecretLen || len(signing) != recon.SecretLen {
			t.Fatalf("first ipn set: %v; want the new secrets in full", ipn)
		}

		// The key in RECON_SECRET_KEY and a key file at once: refused.
		both := map[string]string{"RECON_DATABASE_URL": dbURL, "RECON_SECRET_KEY_FILE": keyFile, "RECON_SECRET_KEY": "x"}
		if _, err := runEnv(both, "migrate"); err == nil || !strings.Contains(err.Error(), "both --secret-key-file and RECON_SECRET_KEY are set") {
			t.Errorf("two keys: %v", err)
		}
		// Another key file for this database: refused, and not created.
		other := filepath.Join(t.TempDir(), "other.key")
		if _, err := runEnv(map[string]string{"RECON_DATABASE_URL": dbURL}, "migrate", "--secret-key-file", other); err == nil ||
			!strings.Contains(err.Error(), "does not exist: restore it from your backup") {
			t.Errorf("another key file: %v", err)
		}

		before, _ := os.ReadFile(keyFile)
		rot := runJSON(t, env, "keys", "rotate")
		if rot["old_key_id"] != 1.0 || rot["new_key_id"] != 2.0 || rot["resealed"] != 3.0 || rot["key_file"] != keyFile {
			t.Fatalf("keys rotate = %v; want key 1 → 2, 3 secrets re-sealed", rot)
		}
		after, _ := os.ReadFile(keyFile)
		if bytes.Equal(before, after) || !strings.Contains(string(after), "\n2:") || strings.Contains(string(after), "\n1:") {
			t.Fatalf("key file after rotation:\n%s", after)
		}
		if again := runJSON(t, env, "merchant", "credentials", "--company", company); again["secret_key"] != secret {
			t.Fatalf("merchant credentials after rotation: %v, want the same secret", again)
		}

		// Saving again without --secret keeps both secrets and shows neither;
		// --rotate-signing-secret shows the new signing secret only.
		ipn = runJSON(t, env, "ipn", "set", "--company", company, "--url", "https://shop.example.vn/ipn2")
		if ipn["secret_key"] != "***"+ipnSecret[44:] || ipn["signing_secret"] != "***"+signing[44:] {
			t.Fatalf("ipn set keeping the secrets answered %v: want them masked", ipn)
		}
		ipn = runJSON(t, env, "ipn", "set", "--company", company, "--url", "https://shop.example.vn/ipn2", "--rotate-signing-secret")
		if s, _ := ipn["signing_secret"].(string); len(s) != recon.SecretLen || s == signing || ipn["secret_key"] != "***"+ipnSecret[44:] {
			t.Fatalf("ipn set --rotate-signing-secret answered %v", ipn)
		}
		// Its whsec_ form beside it, and until when the replaced one signs
		// (docs/design.md, D7, "Standard Webhooks."); the text says both.
		if ipn["signing_secret_whsec"] != recon.WhsecSecret(ipn["signing_secret"].(string)) || ipn["previous_signing_secret_until"] == nil {
			t.Fatalf("ipn set --rotate-signing-secret answered %v; want signing_secret_whsec and previous_signing_secret_until", ipn)
		}
		text, err := runEnv(env, "ipn", "set", "--company", company, "--url", "https://shop.example.vn/ipn2", "--rotate-signing-secret")
		if err != nil || !strings.Contains(text, "signing_secret_whsec: whsec_") ||
			!strings.Contains(text, "previous signing secret: still signs beside the new one until "+ipn["previous_signing_secret_until"].(string)[:10]) {
			t.Fatalf("ipn set --rotate-signing-secret printed %q, %v", text, err)
		}
		// The CLI applies the API's rules and messages.
		if _, err := runEnv(env, "ipn", "set", "--company", company, "--url", "https://shop.example.vn/ipn", "--auth-type", "NONE", "--secret", "x"); err == nil ||
			!strings.Contains(err.Error(), "secret_key is not used with auth_type NONE") {
			t.Errorf("secret with NONE: %v", err)
		}
		if _, err := runEnv(env, "ipn", "set", "--company", company, "--url", "https://127.0.0.1/ipn"); err == nil ||
			!strings.Contains(err.Error(), "ipn_url points to an internal address, which is blocked") {
			t.Errorf("blocked URL: %v", err)
		}
		if _, err := runEnv(env, "ipn", "set", "--company", company, "--url", "https://shop.example.vn/ipn", "--secret", strings.Repeat("ß", 501)); err == nil ||
			!strings.Contains(err.Error(), "secret_key must be 1 to 500 characters") {
			t.Errorf("long secret: %v", err)
		}
	})
}

const alnumChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
