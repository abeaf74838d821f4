package statement

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// Run one fuzzer at a time, e.g.
//
//	go test -run '^$' -fuzz FuzzCSV -fuzztime 15s ./statement/

// addSeeds adds the testdata samples with the given extensions.
func addSeeds(f *testing.F, exts ...string) {
	for _, ext := range exts {
		paths, _ := filepath.Glob("testdata/*" + ext)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}

// fuzzParse checks what must hold for any input: no panic, deterministic
// output, valid lines, skipped rows that name their row, and all-or-nothing
// parsing agreeing with skipping.
func fuzzParse(t *testing.T, data []byte, format Format) {
	lines, skipped, err := Parse(bytes.NewReader(data), format, Options{}, true)
	again, skipped2, err2 := Parse(bytes.NewReader(data), format, Options{}, true)
	if diff := cmp.Diff(lines, again); diff != "" || len(skipped) != len(skipped2) || (err == nil) != (err2 == nil) {
		t.Fatalf("two parses differ:\n%s", diff)
	}
	if err != nil {
		if lines != nil || skipped != nil {
			t.Fatalf("error %v with %d lines", err, len(lines))
		}
		var re *RowError
		if errors.As(err, &re) {
			t.Fatalf("row error %v with skipInvalid", err)
		}
	}
	checkLines(t, lines, vn)
	for _, l := range lines {
		if !utf8.ValidString(l.Tx.Content) || !utf8.ValidString(l.Tx.ReferenceNumber) {
			t.Fatalf("row %d: invalid UTF-8 in a line", l.Row)
		}
	}
	for _, s := range skipped {
		if s.Row < 1 || !strings.HasPrefix(s.Error(), "row "+strconv.Itoa(s.Row)+": ") {
			t.Fatalf("skipped row %d: %q", s.Row, s.Error())
		}
	}
	strict, _, serr := Parse(bytes.NewReader(data), format, Options{}, false)
	switch {
	case err != nil:
		if serr == nil {
			t.Fatalf("skipping failed with %v, all-or-nothing passed", err)
		}
	case len(skipped) > 0:
		var re *RowError
		if !errors.As(serr, &re) || re.Error() != skipped[0].Error() {
			t.Fatalf("all-or-nothing error %v, want %v", serr, skipped[0].Error())
		}
	default:
		if serr != nil || !cmp.Equal(strict, lines) {
			t.Fatalf("all-or-nothing differs: %v", serr)
		}
	}
}

func FuzzCSV(f *testing.F) {
	addSeeds(f, ".csv")
	f.Add([]byte(csvHead + "2026-09-17,\"1,500\",,\"a\"\"b\",R1\n"))
	f.Add([]byte("transaction_date;amount;transaction_content;reference_number;accumulated\n1/9/2026 9:05;-1.500,00;x;R;-1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, data, CSV) })
}

func FuzzCAMT053(f *testing.F) {
	addSeeds(f, ".xml")
	f.Add([]byte(camtDoc("05", "1", xmlBal("OPBD", "10")+xmlBal("CLBD", "160"), camtNtry("VND", "150", "CRDT", ""))))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, data, CAMT053) })
}

func FuzzMT940(f *testing.F) {
	addSeeds(f, ".sta")
	f.Add([]byte(":20:S\n:60F:D260916VND5,\n:61:2612310102RDD5,NTRF//\n:86:123?20a?21b\n:62F:C260917VND0,\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, data, MT940) })
}

// FuzzDetectFormat: detection never panics, and what it accepts parses
// without panicking.
func FuzzDetectFormat(f *testing.F) {
	addSeeds(f, ".csv", ".xml", ".sta")
	f.Fuzz(func(t *testing.T, data []byte) {
		format, err := DetectFormat("upload", data)
		if err != nil {
			return
		}
		fuzzParse(t, data, format)
	})
}

// FuzzCSVAmount: an accepted amount prints back to a form that parses to the
// same number, and an unsigned one is never negative.
func FuzzCSVAmount(f *testing.F) {
	for _, s := range []string{"150000", "1.500.000", "1,500,000.00", "150.000", "-2.000,00", "0,50", "1e6"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, signed bool) {
		n, err := parseCSVAmount(s, signed)
		if err != nil {
			return
		}
		if !signed && n < 0 {
			t.Fatalf("%q unsigned gave %d", s, n)
		}
		if n > maxAmount || n < -maxAmount {
			t.Fatalf("%q gave %d, beyond the limit", s, n)
		}
		for _, form := range []string{strconv.FormatInt(n, 10), strconv.FormatInt(n, 10) + ",00", group(n, '.'), group(n, ',') + ".00"} {
			if back, err := parseCSVAmount(form, true); err != nil || back != n {
				t.Fatalf("%q = %d, but %q = %d, %v", s, n, form, back, err)
			}
		}
	})
}

// group writes n with thousands separated by sep.
func group(n int64, sep byte) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, sep)
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}
