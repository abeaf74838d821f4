package statement

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// vn is the default business time zone, as Parse resolves it.
var vn = defaultLocation()

// goldenLine is a Line as the golden files show it.
type goldenLine struct {
	Row             int    `json:"row"`
	TransactionDate string `json:"transaction_date"`
	AmountIn        int64  `json:"amount_in"`
	AmountOut       int64  `json:"amount_out"`
	Accumulated     *int64 `json:"accumulated"`
	Content         string `json:"content"`
	ReferenceNumber string `json:"reference_number"`
	SubAccount      string `json:"sub_account,omitempty"`
	// References are the other references (docs/statements.md, References).
	References []string `json:"references,omitempty"`
}

type goldenSkip struct {
	Row   int    `json:"row"`
	Error string `json:"error"`
}

type goldenResult struct {
	Format  Format       `json:"format"`
	Lines   []goldenLine `json:"lines"`
	Skipped []goldenSkip `json:"skipped,omitempty"`
	Error   string       `json:"error,omitempty"`
}

func render(f Format, lines []Line, skipped []RowError, err error) []byte {
	res := goldenResult{Format: f, Lines: []goldenLine{}}
	for _, l := range lines {
		res.Lines = append(res.Lines, goldenLine{
			Row:             l.Row,
			TransactionDate: l.Tx.TransactionDate.Format(time.RFC3339Nano),
			AmountIn:        l.Tx.AmountIn,
			AmountOut:       l.Tx.AmountOut,
			Accumulated:     l.Tx.Accumulated,
			Content:         l.Tx.Content,
			ReferenceNumber: l.Tx.ReferenceNumber,
			SubAccount:      l.Tx.SubAccount,
			References:      l.Tx.References,
		})
	}
	for _, s := range skipped {
		res.Skipped = append(res.Skipped, goldenSkip{Row: s.Row, Error: s.Error()})
	}
	if err != nil {
		res.Error = err.Error()
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	return append(b, '\n')
}

// checkLines asserts what holds for every line Parse returns.
func checkLines(t testing.TB, lines []Line, loc *time.Location) {
	t.Helper()
	for _, l := range lines {
		tx := l.Tx
		if l.Row < 1 {
			t.Errorf("row %d: row must be 1-based", l.Row)
		}
		if (tx.AmountIn > 0) == (tx.AmountOut > 0) || tx.AmountIn < 0 || tx.AmountOut < 0 {
			t.Errorf("row %d: exactly one of amount_in %d and amount_out %d must be positive", l.Row, tx.AmountIn, tx.AmountOut)
		}
		if tx.ReferenceNumber == "" {
			t.Errorf("row %d: empty reference", l.Row)
		}
		if tx.TransactionDate.Location().String() != loc.String() {
			t.Errorf("row %d: date %v is in %v, want %v", l.Row, tx.TransactionDate, tx.TransactionDate.Location(), loc)
		}
		if tx.BankAccountID != 0 {
			t.Errorf("row %d: BankAccountID set", l.Row)
		}
	}
}

// TestGolden parses every sample in testdata (format detected from the file)
// with skipInvalid and compares the result with its .golden file; run
// `go test ./statement -run TestGolden -update` to rewrite them.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range paths {
		if strings.HasSuffix(path, ".golden") {
			continue
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := DetectFormat(filepath.Base(path), data[:min(len(data), 4096)])
			if err != nil {
				t.Fatalf("DetectFormat: %v", err)
			}
			lines, skipped, err := Parse(bytes.NewReader(data), f, Options{}, true)
			checkLines(t, lines, vn)
			got := render(f, lines, skipped, err)
			golden := path + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs (-want +got):\n%s", golden, diff)
			}

			// All or nothing: the same lines when nothing was skipped, else
			// the first skipped row as the error.
			strict, _, serr := Parse(bytes.NewReader(data), f, Options{}, false)
			switch {
			case len(skipped) == 0:
				if diff := cmp.Diff(lines, strict); diff != "" || serr != nil {
					t.Errorf("strict parse differs (err %v):\n%s", serr, diff)
				}
			default:
				var re *RowError
				if !errors.As(serr, &re) || re.Error() != skipped[0].Error() || strict != nil {
					t.Errorf("strict parse: %d lines, error %v; want the first skipped row %v", len(strict), serr, skipped[0].Error())
				}
			}
		})
	}
	if n < 8 {
		t.Fatalf("only %d samples in testdata", n)
	}
}

// TestReferencesDeterministic parses each sample twice, once in another time
// zone, and wants the same references, none repeated within a file.
func TestReferencesDeterministic(t *testing.T) {
	for _, name := range []string{"camt053_v02_vietcombank.xml", "camt053_v04_bidv.xml", "camt053_v08_techcombank.xml", "mt940_vietinbank.sta", "mt940_multipage_crlf.sta"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			f, _ := DetectFormat(name, data)
			refs := func(loc *time.Location) []string {
				lines, _, err := Parse(bytes.NewReader(data), f, Options{Location: loc}, false)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, l := range lines {
					out = append(out, l.Tx.ReferenceNumber)
				}
				return out
			}
			first, again, utc := refs(nil), refs(nil), refs(time.UTC)
			if diff := cmp.Diff(first, again); diff != "" {
				t.Errorf("second import differs:\n%s", diff)
			}
			if diff := cmp.Diff(first, utc); diff != "" {
				t.Errorf("import in UTC differs:\n%s", diff)
			}
			seen := map[string]bool{}
			hashed := 0
			for _, r := range first {
				if seen[r] {
					t.Errorf("reference %s repeats", r)
				}
				seen[r] = true
				if strings.HasPrefix(r, "stmt-") {
					hashed++
				}
			}
			if hashed == 0 {
				t.Errorf("sample has no entry without a reference")
			}
		})
	}
}

// TestHashedReferenceIgnoresPosition: the same entry in another statement
// (another position, other neighbours) gets the same reference.
func TestHashedReferenceIgnoresPosition(t *testing.T) {
	entry := ":61:260917C500000,00NMSCNONREF\n:86:Tran Van Bao chuyen tien DH1720\n"
	a := ":20:A\n:61:260917C100000,NTRFNONREF//FT1\n:86:other\n" + entry
	b := ":20:B\n" + entry
	la, _, err := Parse(strings.NewReader(a), MT940, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	lb, _, err := Parse(strings.NewReader(b), MT940, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lb[0].Tx.ReferenceNumber, la[1].Tx.ReferenceNumber; got != want || !strings.HasPrefix(got, "stmt-") {
		t.Errorf("reference %q in one file, %q in the other", want, got)
	}
}

func TestLocation(t *testing.T) {
	const doc = `transaction_date,amount_in,transaction_content,reference_number
2026-09-17,1000,date only,R1
2026-09-17 08:15:32,1000,wall clock,R2
2026-09-17T01:15:32Z,1000,UTC,R3
2026-09-17T08:15:32+09:00,1000,Tokyo,R4
`
	tokyo := time.FixedZone("JST", 9*3600)
	for _, tc := range []struct {
		loc  *time.Location
		want []string
	}{
		{nil, []string{"2026-09-17T00:00:00+07:00", "2026-09-17T08:15:32+07:00", "2026-09-17T08:15:32+07:00", "2026-09-17T06:15:32+07:00"}},
		{tokyo, []string{"2026-09-17T00:00:00+09:00", "2026-09-17T08:15:32+09:00", "2026-09-17T10:15:32+09:00", "2026-09-17T08:15:32+09:00"}},
	} {
		lines, _, err := Parse(strings.NewReader(doc), CSV, Options{Location: tc.loc}, false)
		if err != nil {
			t.Fatal(err)
		}
		want := tc.loc
		if want == nil {
			want = vn
		}
		checkLines(t, lines, want)
		var got []string
		for _, l := range lines {
			got = append(got, l.Tx.TransactionDate.Format(time.RFC3339))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("location %v (-want +got):\n%s", tc.loc, diff)
		}
	}
	if vn.String() != DefaultTimeZone {
		t.Logf("zone database missing: default location is %v", vn)
	}
}

func TestProgress(t *testing.T) {
	var b strings.Builder
	b.WriteString("transaction_date,amount_in,transaction_content,reference_number\n")
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString("2026-09-17 08:15:32,150000,NGUYEN VAN A chuyen tien DH1709 qua ung dung ngan hang,REF")
		b.WriteString(strings.Repeat("0", 8))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString("\n")
	}
	size := int64(b.Len())
	var calls []int64
	_, _, err := Parse(strings.NewReader(b.String()), CSV, Options{Progress: func(n int64) { calls = append(calls, n) }}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 4 {
		t.Fatalf("progress called %d times for %d bytes", len(calls), size)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i] < calls[i-1] {
			t.Fatalf("progress went back: %v", calls)
		}
	}
	if last := calls[len(calls)-1]; last != size {
		t.Errorf("last progress %d, want the file size %d", last, size)
	}
}

func TestDetectFormat(t *testing.T) {
	for _, tc := range []struct {
		name, head string
		want       Format
		err        string
	}{
		{"stmt.xml", `<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">`, CAMT053, ""},
		{"stmt.txt", "\ufeff\n  <?xml version=\"1.0\"?>\n<ns2:Document xmlns:ns2='urn:iso:std:iso:20022:tech:xsd:camt.053.001.02'>", CAMT053, ""},
		{"stmt.xml", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.09">`, CAMT053, ""}, // Parse names the version
		{"ntf.xml", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.02">`, "", "camt.054.001.02 message: only camt.053"},
		{"x.xml", `<html><body>`, "", "not an ISO 20022 camt.053"},
		{"x.xml", `transaction_date,amount`, "", "is not XML"},
		{"stmt.sta", ":20:STMT1\n:25:123\n", MT940, ""},
		{"stmt.txt", "{1:F01ICBVVNVXAXXX0000000000}{2:O940}{4:\n:20:X", MT940, ""},
		{"stmt.mt940", "hello", "", "not an MT940 statement"},
		{"stmt.csv", "transaction_date,amount_in\n", CSV, ""},
		{"stmt", "\ufefftransaction_date;amount\n", CSV, ""},
		{"stmt.csv", "", "", "is empty"},
		{"stmt.csv", "\xff\xfet\x00", "", "UTF-16"},
		{"stmt.xlsx", "PK\x03\x04\x14\x00", XLSX, ""},
		{"export", "PK\x03\x04\x14\x00\x00\x00[Content_Types].xml", XLSX, ""},
		{"stmt.zip", "PK\x03\x04\x14\x00\x00\x00readme.txt", "", "zip archive, not an Excel workbook"},
		{"stmt.xls", "\xd0\xcf\x11\xe0\xa1\xb1", "", "old Excel workbook (.xls)"},
		{"stmt.bin", "a\x00b", "", "not a text file"},
	} {
		got, err := DetectFormat(tc.name, []byte(tc.head))
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("DetectFormat(%q, %.30q) = %q, %v; want %q, error containing %q", tc.name, tc.head, got, err, tc.want, tc.err)
		}
		if err != nil && recon.ErrorCode(err) != recon.EINVALID {
			t.Errorf("DetectFormat(%q): error code %q", tc.name, recon.ErrorCode(err))
		}
	}
}
