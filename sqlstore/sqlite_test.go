package sqlstore_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestSQLitePragmas checks that every pooled connection, not only the first,
// has the settings of the DSN.
func TestSQLitePragmas(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, sqlstore.EngineSQLite)
	want := map[string]string{"journal_mode": "wal", "synchronous": "2", "busy_timeout": "10000", "foreign_keys": "1"}
	var conns []interface{ Close() error }
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 3 {
		conn, err := db.SQL().Conn(t.Context()) // held, so the next one is another connection
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		for pragma, value := range want {
			var got string
			if err := conn.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
				t.Fatalf("connection %d: PRAGMA %s: %v", i, pragma, err)
			}
			if got != value {
				t.Errorf("connection %d: PRAGMA %s = %s, want %s", i, pragma, got, value)
			}
		}
	}
}

// TestDurability: SQLite syncs every commit unless the operator chooses
// otherwise, an unknown setting is refused by name, and Durability reports
// what each engine does (the harness's PostgreSQL runs without sync).
func TestDurability(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		setting, durable, err := db.Durability(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want, wantDurable := "synchronous=full", true
		if engine == sqlstore.EnginePostgres {
			want, wantDurable = "synchronous_commit=off fsync=off", false
		}
		if setting != want || durable != wantDurable {
			t.Fatalf("Durability() = %q, %v; want %q, %v", setting, durable, want, wantDurable)
		}
	})
	url := dbtest.NewURL(t, sqlstore.EngineSQLite)
	db, err := sqlstore.Open(t.Context(), url, sqlstore.WithSQLiteSynchronous(sqlstore.SQLiteSyncNormal))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if setting, durable, err := db.Durability(t.Context()); err != nil || setting != "synchronous=normal" || durable {
		t.Fatalf("with normal: Durability() = %q, %v, %v", setting, durable, err)
	}
	_, err = sqlstore.Open(t.Context(), url, sqlstore.WithSQLiteSynchronous("off"))
	if recon.ErrorCode(err) != recon.EINVALID || !strings.Contains(err.Error(), `the SQLite synchronous setting must be full or normal, not "off"`) {
		t.Fatalf("an unknown setting: %v", err)
	}
}

// Environment of the writer process of TestSQLiteConcurrentWriters.
const (
	envWriterURL     = "RECON_SQLSTORE_TEST_WRITER_URL"
	envWriterCompany = "RECON_SQLSTORE_TEST_WRITER_COMPANY"
)

const (
	writerGoroutines = 8
	writesPerWriter  = 25
)

// TestSQLiteConcurrentWriters writes from several goroutines of this process
// and from a second process at once, with single statements and with
// transactions that read before they write. Every write must succeed: a
// writer waits for the lock (busy_timeout, BEGIN IMMEDIATE) rather than fail
// with "database is locked".
func TestSQLiteConcurrentWriters(t *testing.T) {
	t.Parallel()
	databaseURL := dbtest.NewURL(t, sqlstore.EngineSQLite)
	db := dbtest.OpenURL(t, databaseURL)
	company := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyActive}
	if err := db.CreateCompany(t.Context(), company); err != nil {
		t.Fatal(err)
	}

	// The other process opens the database, says "ready", and writes when told to.
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSQLiteWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envWriterURL+"="+databaseURL, envWriterCompany+"="+strconv.FormatInt(company.ID, 10))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	var childOut strings.Builder
	for {
		line, err := out.ReadString('\n')
		childOut.WriteString(line)
		if err != nil {
			cmd.Wait()
			t.Fatalf("writer process did not get ready: %v\n%s%s", err, childOut.String(), stderr.String())
		}
		if line == "ready\n" {
			break
		}
	}
	childDone := make(chan error, 1)
	go func() {
		rest, _ := io.ReadAll(out)
		childOut.Write(rest)
		childDone <- cmd.Wait()
	}()
	fmt.Fprintln(stdin, "go")

	errs := make(chan error, writerGoroutines*writesPerWriter)
	var wg sync.WaitGroup
	for g := range writerGoroutines {
		wg.Go(func() {
			for i := range writesPerWriter {
				errs <- writeOnce(context.Background(), db, company.ID, fmt.Sprintf("g%d-%d", g, i))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if err := <-childDone; err != nil {
		t.Fatalf("writer process: %v\n%s%s", err, childOut.String(), stderr.String())
	}

	var users int
	if err := db.SQL().QueryRowContext(t.Context(), "SELECT count(*) FROM users").Scan(&users); err != nil {
		t.Fatal(err)
	}
	if want := (writerGoroutines + 1) * writesPerWriter; users != want {
		t.Fatalf("%d users stored, want %d", users, want)
	}
}

// TestSQLiteWriterProcess is the second process of TestSQLiteConcurrentWriters.
func TestSQLiteWriterProcess(t *testing.T) {
	databaseURL := os.Getenv(envWriterURL)
	if databaseURL == "" {
		t.Skip("the writer process of TestSQLiteConcurrentWriters")
	}
	companyID, err := strconv.ParseInt(os.Getenv(envWriterCompany), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.Open(t.Context(), databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	for i := range writesPerWriter {
		if err := writeOnce(t.Context(), db, companyID, fmt.Sprintf("p-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
}

// writeOnce creates a user (one statement) and replaces the company's
// payment-code formats (a transaction that reads, then writes).
func writeOnce(ctx context.Context, db *sqlstore.DB, companyID int64, name string) error {
	u := &recon.User{Company: companyID, Email: name + "@example.com", Role: recon.RoleMember}
	if err := db.CreateUser(ctx, u); err != nil {
		return fmt.Errorf("CreateUser %s: %w", name, err)
	}
	formats := []recon.PaymentCodeFormat{{Prefix: "AB", SuffixFrom: 1, SuffixTo: 5, CharacterType: recon.NumberOnly, IsActive: true}}
	if _, err := db.ReplacePaymentCodeFormats(ctx, companyID, formats); err != nil {
		return fmt.Errorf("ReplacePaymentCodeFormats %s: %w", name, err)
	}
	return nil
}
