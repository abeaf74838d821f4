package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestNULInputEveryRoute sends a NUL byte to every registered route, on both
// engines, in each place a client controls: a path segment, a query
// parameter, a JSON string, a form field, Basic credentials, a Bearer token
// and a statement file. PostgreSQL cannot store a NUL in text: every one
// must be a 400 naming the character, never a 500, also before
// authentication.
func TestNULInputEveryRoute(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, "sqlite")
	patterns := routePatterns(t, db, true)
	wildcard := regexp.MustCompile(`\{[^}]*\}`)
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		m := setupMerchant(t, base, dbURL, "http://127.0.0.1:9/ipn")
		client := cliJSON(t, dbURL, "client", "create", "--company", m.company, "--name", "all",
			"--scopes", "company transaction:read transaction:write bank-account:read delivery:read delivery:write")["client_id"].(string)
		bearer := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "admin@saomai.vn",
			"--scopes", "company transaction:read transaction:write bank-account:read delivery:read delivery:write")["access_token"].(string)
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(m.merchantID+":"+m.secret))

		// send makes one request with the route's usual credentials unless
		// authz is given, and fails t unless the answer is a 400 naming
		// the control character (want "" accepts any 4xx but no 5xx).
		send := func(t *testing.T, what, method, path, contentType, body, authz, want string) {
			t.Helper()
			req, err := http.NewRequest(method, base+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if contentType != "" {
				req.Header.Set("Content-Type", contentType)
			}
			switch {
			case authz != "":
				req.Header.Set("Authorization", authz)
			case strings.HasPrefix(path, "/api/"):
				req.Header.Set("Authorization", "Bearer "+bearer)
			case strings.HasPrefix(path, "/v1/"):
				req.Header.Set("Authorization", basic)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				raw = []byte(html.UnescapeString(string(raw))) // the dashboard's error page
			}
			switch {
			case resp.StatusCode >= 500:
				t.Errorf("%s %s (%s): %d %s", method, path, what, resp.StatusCode, raw)
			case want != "" && (resp.StatusCode != 400 || !strings.Contains(string(raw), want)):
				t.Errorf("%s %s (%s): %d %s; want 400 naming %q", method, path, what, resp.StatusCode, raw, want)
			case resp.StatusCode < 400:
				t.Errorf("%s %s (%s): %d %s; want a 4xx", method, path, what, resp.StatusCode, raw)
			}
		}
		const nul = "U+0000"
		for _, p := range patterns {
			method, pattern, _ := strings.Cut(p, " ")
			pattern = strings.TrimSuffix(pattern, "{$}")
			path := wildcard.ReplaceAllStringFunc(pattern, func(w string) string {
				switch w {
				case "{merchant}":
					return m.merchantID
				case "{id}":
					return m.account
				}
				return "INV1"
			})
			if wildcard.MatchString(pattern) {
				send(t, "path segment", method, wildcard.ReplaceAllString(pattern, "a%00b"), "", "", "", nul)
			}
			send(t, "query parameter", method, path+"?q=a%00b", "", "", "", nul)
			send(t, "query parameter name", method, path+"?a%00b=1", "", "", "", nul)
			// A statement upload's body is a file, whatever its Content-Type
			// says: a JSON or form body is a file that does not parse (a
			// 4xx); NUL inside statement files is checked below.
			bodyWant := nul
			if strings.HasSuffix(pattern, "/statements") {
				bodyWant = ""
			}
			send(t, "JSON string", method, path, "application/json",
				`{"transaction_content":"NGUYEN VAN A\u0000 DH123456","order_invoice_number":"INV\u00001","url":"https://x.vn/\u0000"}`, "", bodyWant)
			send(t, "JSON key", method, path, "application/json", `{"a\u0000b":1}`, "", bodyWant)
			send(t, "form field", method, path, "application/x-www-form-urlencoded",
				"merchant="+m.merchantID+"&order_invoice_number=INV%001&grant_type=client_credentials&token=a%00b", "", bodyWant)
			send(t, "Basic user", method, path, "", "", "Basic "+base64.StdEncoding.EncodeToString([]byte(m.merchantID+"\x00:"+m.secret)), nul)
			send(t, "Basic secret", method, path, "", "", "Basic "+base64.StdEncoding.EncodeToString([]byte(m.merchantID+":\x00"+m.secret)), nul)
			send(t, "Bearer non-UTF-8", method, path, "", "", "Bearer \xff\xfe", "not UTF-8")
			// A raw NUL cannot be sent through net/http's client: write it.
			conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer abc\x00def\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", method, path)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 400 {
				t.Errorf("%s %s with a NUL in the Bearer token: %d, want 400", method, path, resp.StatusCode)
			}
			conn.Close()
		}

		// Statement files: a NUL in a memo, a reference or a sub-account, as
		// the raw body and as a multipart file, fails the import naming the
		// row, and nothing is stored.
		upload := "/api/v1/bank-accounts/" + m.account + "/statements"
		for _, csv := range []string{
			"transaction_date,amount_in,transaction_content,reference_number\n2026-03-01,1000,ok,R1\n2026-03-01,1000,bad\x00memo,R2\n",
			"transaction_date,amount_in,transaction_content,reference_number\n2026-03-01,1000,ok,R1\n2026-03-01,1000,memo,R\x002\n",
			"transaction_date,amount_in,transaction_content,reference_number,sub_account\n2026-03-01,1000,ok,R1,\n2026-03-01,1000,memo,R2,VA\x001\n",
		} {
			send(t, "statement file", "POST", upload+"?format=csv", "text/csv", csv, "", "row 3: ")
			var mp bytes.Buffer
			w := multipart.NewWriter(&mp)
			f, _ := w.CreateFormFile("file", "statement.csv")
			f.Write([]byte(csv))
			w.Close()
			send(t, "multipart statement file", "POST", upload+"?format=csv", w.FormDataContentType(), mp.String(), "", "row 3: ")
		}
		cliJSON(t, dbURL, "user", "create", "--company", m.company, "--email", "reader@saomai.vn", "--role", "Admin", "--permission", "view_transactions")
		reader := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "reader@saomai.vn", "--scopes", "transaction:read")["access_token"].(string)
		if status, body := testkit.Call(t, "GET", base+"/api/v1/transactions", reader, ""); status != 200 || len(body["data"].([]any)) != 0 {
			t.Fatalf("after refused input: %d %v, want no transactions", status, body)
		}
	})
}
