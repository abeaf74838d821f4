package dashboard_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestDashboardUploadLimit: the statement upload's size limit
// (docs/dashboard.md), both engines: the form says it, a file over it is
// refused with the reason, a body announced larger than the form may be is
// refused before it is read, and nothing is stored.
func TestDashboardUploadLimit(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dashUploadLimit(t, newDashEnv(t, engine))
	})
}

func dashUploadLimit(t *testing.T, e *dashEnv) {
	b := e.signedIn(t, "boss@saomai.vn")
	db := e.db
	company, _ := parseID(e.live.company)
	count := func() int64 {
		_, n, err := db.Transactions(context.Background(), recon.LiveTenant(company), recon.TransactionFilter{Page: 1, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	_, body := b.Get("/dashboard/bank-accounts")
	if !strings.Contains(body, `<span id="upload-limit">Largest file: 64 MiB.</span>`) || !strings.Contains(body, fmt.Sprintf(`data-max-bytes="%d"`, recon.MaxStatementBytes)) ||
		!strings.Contains(body, `<script src="/dashboard/static/upload.js" defer></script>`) {
		t.Fatalf("upload form: %s", body)
	}
	resp, js := b.Do("GET", "/dashboard/static/upload.js", nil, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") || !strings.Contains(js, "xhr.upload.addEventListener('progress'") {
		t.Fatalf("upload.js: %d %s", resp.StatusCode, resp.Header)
	}
	before := count()
	// One byte over the limit, inside the form's room: the page says so, nothing stored.
	row := "2026-10-01 08:00:00,1000,,big,BIG1\n"
	big := "transaction_date,amount_in,amount_out,transaction_content,reference_number\n" + row
	big += strings.Repeat(" ", recon.MaxStatementBytes+1-len(big))
	status, body := upload(b, fmt.Sprint(e.live.account), "big.csv", big)
	if status != 400 || !strings.Contains(body, `id="upload-error"`) || !strings.Contains(body, "the statement file is larger than the limit of 67108864 bytes (64 MiB)") {
		t.Fatalf("a file over the limit: %d %s", status, body)
	}
	// A body announced larger than the form may be: refused before it is read.
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	u, _ := url.Parse(e.base + "/dashboard/")
	var cookies []string
	for _, c := range b.Client.Jar.Cookies(u) {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	fmt.Fprintf(conn, "POST /dashboard/bank-accounts/statement HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nCookie: %s\r\nAccept-Language: en\r\n"+
		"Content-Type: multipart/form-data; boundary=x\r\nContent-Length: %d\r\n\r\n--x\r\n",
		u.Host, e.base, strings.Join(cookies, "; "), recon.MaxStatementBytes+1<<20)
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := new(strings.Builder)
	_, _ = bufio.NewReader(resp.Body).WriteTo(raw)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(raw.String(), "the statement file is larger than the limit of 67108864 bytes (64 MiB)") {
		t.Fatalf("a body over the limit: %d %s", resp.StatusCode, raw)
	}
	if n := count(); n != before {
		t.Fatalf("refused uploads stored %d transactions", n-before)
	}
}
