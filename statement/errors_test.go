package statement

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon"
)

// camtDoc builds a camt.053 document of the given version ("08") around
// balances and entries.
func camtDoc(version, acct, balances, entries string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.` + version + `">
<BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-09-17T23:00:00+07:00</CreDtTm></GrpHdr>
<Stmt>
<Id>S1</Id>
<Acct><Id><Othr><Id>` + acct + `</Id></Othr></Id></Acct>
` + balances + entries + `
</Stmt>
</BkToCstmrStmt>
</Document>
`
}

func xmlBal(code string, amount string) string {
	return `<Bal><Tp><CdOrPrtry><Cd>` + code + `</Cd></CdOrPrtry></Tp><Amt Ccy="VND">` + amount +
		`</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-09-17</Dt></Dt></Bal>
`
}

func camtNtry(ccy, amount, cdtDbt, ref string) string {
	return `<Ntry>
<Amt Ccy="` + ccy + `">` + amount + `</Amt>
<CdtDbtInd>` + cdtDbt + `</CdtDbtInd>
<Sts>BOOK</Sts>
<BookgDt><Dt>2026-09-17</Dt></BookgDt>
<AcctSvcrRef>` + ref + `</AcctSvcrRef>
<NtryDtls><TxDtls><RmtInf><Ustrd>NGUYEN VAN A chuyen tien DH1709</Ustrd></RmtInf></TxDtls></NtryDtls>
</Ntry>
`
}

const csvHead = "transaction_date,amount_in,amount_out,transaction_content,reference_number\n"

// TestParseErrors: each input fails as a whole (all or nothing), with a
// message naming what is wrong and, for a row, where.
func TestParseErrors(t *testing.T) {
	good := camtNtry("VND", "150000", "CRDT", "R1")
	for _, tc := range []struct {
		name   string
		format Format
		opts   Options
		input  string
		row    int // the RowError's row, 0 for a file-level error
		want   string
	}{
		// CSV rows.
		{"csv bad amount", CSV, Options{}, csvHead + "2026-09-17,15O000,,memo,R1\n", 2, `row 2: amount_in: "15O000" is not an amount`},
		{"csv fraction", CSV, Options{}, csvHead + "2026-09-17,1,150000.50,memo,R1\n", 2, `row 2: amount_out: "150000.50": VND has no minor unit`},
		{"csv bad date", CSV, Options{}, csvHead + "2026-09-17,1000,,a,R1\n2026-09-17,1000,,b,R2\n2026-02-30 10:00:00,1000,,c,R3\n", 4, `row 4: transaction_date: "2026-02-30 10:00:00" is not a date`},
		{"csv US date", CSV, Options{}, csvHead + "09/17/2026,1000,,memo,R1\n", 2, `row 2: transaction_date: "09/17/2026" is not a date`},
		{"csv empty reference", CSV, Options{}, csvHead + "2026-09-17,1000,,memo,  \n", 2, "row 2: reference_number: is empty"},
		{"csv zero signed amount", CSV, Options{}, "transaction_date;amount;transaction_content;reference_number\n17/09/2026;0;memo;R1\n", 2, "row 2: amount: is zero"},
		{"csv invalid UTF-8", CSV, Options{}, csvHead + "2026-09-17,1000,,Chuy\xea\xb5n ti\xe8n,R1\n", 2, "row 2: transaction_content: text is not valid UTF-8"},
		{"csv quote", CSV, Options{}, csvHead + "2026-09-17,1000,,NGUYEN \"VAN\" A,R1\n", 2, `row 2: row: bare " in non-quoted-field`},
		{"csv value in nameless column", CSV, Options{}, "transaction_date,amount_in,transaction_content,reference_number,\n2026-09-17,1000,memo,R1,x\n", 2, "row 2: column 5: has a value but no name"},
		// CSV files.
		{"csv missing reference column", CSV, Options{}, "transaction_date,amount_in,transaction_content\n2026-09-17,1000,memo\n", 0, "missing CSV column reference_number: the known columns are transaction_date, amount_in, amount_out, amount, transaction_content, reference_number, accumulated, sub_account"},
		{"csv missing amount columns", CSV, Options{}, "transaction_date,transaction_content,reference_number\n", 0, "missing CSV column amount_in and/or amount_out (or a signed amount)"},
		{"csv unknown columns", CSV, Options{}, "transaction_date,amount_in,transaction_content,reference_number,Currency,Balance\n", 0, `unknown CSV column "Currency", "Balance": the known columns are transaction_date,`},
		{"csv repeated column", CSV, Options{}, "transaction_date,amount_in,transaction_content,reference_number,Amount In\n", 0, "CSV column amount_in appears more than once"},
		{"csv amount and amount_in", CSV, Options{}, "transaction_date,amount,amount_in,transaction_content,reference_number\n", 0, "both amount and amount_in/amount_out"},
		{"csv empty", CSV, Options{}, "", 0, "the file is empty: a header row is required"},
		{"csv UTF-16", CSV, Options{}, "\xff\xfet\x00r\x00", 0, "UTF-16"},

		// camt.053 rows.
		{"camt wrong currency", CAMT053, Options{}, camtDoc("08", "123", "", camtNtry("USD", "150000", "CRDT", "R1")), 8, "row 8: Amt: currency USD is not supported: only VND"},
		{"camt fraction", CAMT053, Options{}, camtDoc("02", "123", "", camtNtry("VND", "150000.5", "CRDT", "R1")), 8, `row 8: Amt: "150000.5": VND has no minor unit`},
		{"camt bad amount", CAMT053, Options{}, camtDoc("02", "123", "", camtNtry("VND", "1,500", "CRDT", "R1")), 8, `row 8: Amt: "1,500" is not an amount`},
		{"camt bad indicator", CAMT053, Options{}, camtDoc("02", "123", "", camtNtry("VND", "1500", "CRED", "R1")), 8, `row 8: CdtDbtInd: "CRED": must be CRDT or DBIT`},
		{"camt bad date", CAMT053, Options{}, camtDoc("04", "123", "", strings.Replace(good, "2026-09-17", "17/09/2026", 1)), 8, `row 8: BookgDt: "17/09/2026" is not a date (YYYY-MM-DD)`},
		// camt.053 files.
		{"camt balance mismatch", CAMT053, Options{}, camtDoc("08", "123", xmlBal("OPBD", "1000000")+xmlBal("CLBD", "1200000"), good), 0, "statement S1: closing balance 1200000 does not equal opening balance 1000000 plus the entries (+150000) = 1150000: the file is corrupt or partial"},
		{"camt version 09", CAMT053, Options{}, camtDoc("09", "123", "", good), 0, "camt.053.001.09 is an unsupported camt.053 version: supported are camt.053.001.02 through camt.053.001.08"},
		{"camt version 01", CAMT053, Options{}, camtDoc("01", "123", "", good), 0, "camt.053.001.01 is an unsupported camt.053 version"},
		{"camt.054", CAMT053, Options{}, strings.Replace(camtDoc("02", "123", "", good), "camt.053", "camt.054", 1), 0, "camt.054.001.02 is not supported: only camt.053 bank statements are"},
		{"camt no namespace", CAMT053, Options{}, `<Document><BkToCstmrStmt/></Document>`, 0, "the XML Document has no namespace"},
		{"camt truncated", CAMT053, Options{}, camtDoc("08", "123", "", good)[:400], 0, "the XML ends too early at line"},
		{"camt malformed", CAMT053, Options{}, strings.Replace(camtDoc("08", "123", "", good), "</Ntry>", "</Ntr>", 1), 0, "malformed XML at line 15: element <Ntry> closed by </Ntr>"},
		{"camt not XML", CAMT053, Options{}, "transaction_date,amount_in\n", 0, "no ISO 20022 Document element"},
		{"camt no statement", CAMT053, Options{}, `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><GrpHdr/></BkToCstmrStmt></Document>`, 0, "holds no BkToCstmrStmt/Stmt"},
		{"camt USD balance", CAMT053, Options{}, camtDoc("08", "123", strings.Replace(xmlBal("OPBD", "10"), "VND", "USD", 1), good), 0, "statement S1: OPBD balance: currency USD is not supported: only VND"},
		{"camt other account", CAMT053, Options{AccountNumber: "0071001234567"}, camtDoc("08", "0071009999999", "", good), 0, "statement is for account 0071009999999, not 0071001234567"},
		{"camt two accounts", CAMT053, Options{}, strings.Replace(camtDoc("08", "111", "", good), "</BkToCstmrStmt>", "<Stmt><Id>S2</Id><Acct><Id><Othr><Id>222</Id></Othr></Id></Acct></Stmt></BkToCstmrStmt>", 1), 0, "file holds statements of two accounts, 111 and 222"},

		// MT940 rows.
		{"mt940 fraction", MT940, Options{}, ":20:S\n:61:260917C150000,50NTRFNONREF\n:86:x\n", 2, `row 2: :61: amount "150000,50": VND has no minor unit`},
		{"mt940 bad mark", MT940, Options{}, ":20:S\n:61:260917X150000,NTRFNONREF\n", 2, "row 2: :61: \"260917X150000,NTRFNONREF\": the debit/credit mark must be C, D, RC or RD"},
		{"mt940 bad date", MT940, Options{}, ":20:S\n:25:1\n:61:261317C1,NTRFNONREF\n", 3, `row 3: :61: value date "261317" is not a date (YYMMDD)`},
		{"mt940 no type code", MT940, Options{}, ":20:S\n:61:260917C1000,\n", 2, "no transaction type code"},
		{"mt940 zero", MT940, Options{}, ":20:S\n:61:260917C0,NTRFNONREF\n", 2, "row 2: :61: the amount is zero"},
		// MT940 files.
		{"mt940 balance mismatch", MT940, Options{}, ":20:S\n:60F:C260916VND1000000,\n:61:260917C150000,NTRFNONREF\n:62F:C260917VND1200000,\n", 0, "statement :20:S: closing balance 1200000 does not equal opening balance 1000000 plus the entries (+150000) = 1150000"},
		{"mt940 USD", MT940, Options{}, ":20:S\n:60F:C260916USD1000,00\n", 0, "statement :20:S: line 2: :60F: currency USD is not supported: only VND"},
		{"mt940 no :20:", MT940, Options{}, ":25:123\n:61:260917C1,NTRFNONREF\n", 0, "line 1: an MT940 message starts with :20:, not :25:"},
		{"mt940 garbage", MT940, Options{}, "hello\n:20:S\n", 0, "line 1: not MT940: expected :20: first"},
		{"mt940 empty", MT940, Options{}, "\n\n", 0, "no :20: field"},
		{"mt940 other account", MT940, Options{AccountNumber: "101234567890"}, ":20:S\n:25:ICBVVNVX/101234567891\n", 0, "statement is for account ICBVVNVX/101234567891, not 101234567890"},

		{"unknown format", "ofx", Options{}, "", 0, `unknown statement format "ofx"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, skipped, err := Parse(strings.NewReader(tc.input), tc.format, tc.opts, false)
			if err == nil || lines != nil || skipped != nil {
				t.Fatalf("Parse = %d lines, %d skipped, error %v; want an error", len(lines), len(skipped), err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tc.want)
			}
			var re *RowError
			switch {
			case tc.row == 0 && errors.As(err, &re):
				t.Errorf("got a row error (row %d), want a file-level error", re.Row)
			case tc.row != 0 && !errors.As(err, &re):
				t.Errorf("got %T, want a *RowError", err)
			case tc.row != 0 && re.Row != tc.row:
				t.Errorf("row %d, want %d", re.Row, tc.row)
			}
			if code := recon.ErrorCode(err); code != recon.EINVALID {
				t.Errorf("code %q, want %q", code, recon.EINVALID)
			}
			if msg := recon.ErrorMessage(err); !strings.Contains(msg, tc.want) {
				t.Errorf("client message %q lacks %q", msg, tc.want)
			}
		})
	}
}

// TestAccountMatches: Options.AccountNumber accepts the usual spellings.
func TestAccountMatches(t *testing.T) {
	for _, acct := range []string{"0071001234567", "0071 0012 34567", "BFTVVNVX/0071001234567", "0071001234567VND", "bftvvnvx/0071-001-234567"} {
		_, _, err := Parse(strings.NewReader(":20:S\n:25:"+acct+"\n:61:260917C1,NTRFNONREF\n"), MT940, Options{AccountNumber: "0071001234567"}, false)
		if err != nil {
			t.Errorf(":25:%s: %v", acct, err)
		}
	}
}

// TestSkipInvalid: every bad row is reported with its row, the good ones kept,
// and the balance check still runs when the bad rows' amounts are known.
func TestSkipInvalid(t *testing.T) {
	t.Run("csv", func(t *testing.T) {
		in := csvHead +
			"2026-09-17,1000,,a,R1\n" + // 2 ok
			"2026-09-17,x,,b,R2\n" + // 3 bad amount
			"2026-09-31,1000,,c,R3\n" + // 4 bad date
			"2026-09-17,2000,,d,R4\n" + // 5 ok
			"2026-09-17,1000,,e,\n" // 6 no reference
		lines, skipped, err := Parse(strings.NewReader(in), CSV, Options{}, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := rows(lines); !cmp.Equal(got, []int{2, 5}) {
			t.Errorf("lines at rows %v, want [2 5]", got)
		}
		var got []string
		for _, s := range skipped {
			got = append(got, s.Error())
		}
		want := []string{
			`row 3: amount_in: "x" is not an amount`,
			`row 4: transaction_date: "2026-09-31" is not a date: use YYYY-MM-DD [HH:MM:SS] or DD/MM/YYYY [HH:MM:SS]`,
			`row 6: reference_number: is empty: every row needs the bank's reference`,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("skipped (-want +got):\n%s", diff)
		}
	})
	t.Run("camt balance kept", func(t *testing.T) {
		// The entry with a bad date still counts towards the balance.
		bad := strings.Replace(camtNtry("VND", "50000", "CRDT", "R2"), "2026-09-17", "2026-09-32", 1)
		doc := camtDoc("08", "1", xmlBal("OPBD", "1000")+xmlBal("CLBD", "201000"), camtNtry("VND", "150000", "CRDT", "R1")+bad)
		lines, skipped, err := Parse(strings.NewReader(doc), CAMT053, Options{}, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != 1 || len(skipped) != 1 || *lines[0].Tx.Accumulated != 151000 {
			t.Fatalf("got %d lines, %d skipped", len(lines), len(skipped))
		}
	})
	t.Run("camt balance unknown", func(t *testing.T) {
		// A USD entry's amount is unknown: no check, no running balance after it.
		doc := camtDoc("08", "1", xmlBal("OPBD", "1000")+xmlBal("CLBD", "999999"),
			camtNtry("VND", "150000", "CRDT", "R1")+camtNtry("USD", "10", "CRDT", "R2")+camtNtry("VND", "2000", "DBIT", "R3"))
		lines, skipped, err := Parse(strings.NewReader(doc), CAMT053, Options{}, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != 2 || len(skipped) != 1 || skipped[0].Row != 18 {
			t.Fatalf("got %d lines, skipped %v", len(lines), skipped)
		}
		if lines[0].Tx.Accumulated == nil || *lines[0].Tx.Accumulated != 151000 || lines[1].Tx.Accumulated != nil {
			t.Errorf("accumulated %v, %v; want 151000, nil", lines[0].Tx.Accumulated, lines[1].Tx.Accumulated)
		}
	})
	t.Run("balance mismatch is always an error", func(t *testing.T) {
		doc := camtDoc("08", "1", xmlBal("OPBD", "1000")+xmlBal("CLBD", "5000"), camtNtry("VND", "150000", "CRDT", "R1"))
		if _, _, err := Parse(strings.NewReader(doc), CAMT053, Options{}, true); err == nil || !strings.Contains(err.Error(), "closing balance 5000") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("mt940", func(t *testing.T) {
		in := ":20:S\n:60F:C260916VND1000,\n" +
			":61:260917C100,NTRFNONREF//A\n:86:ok\n" +
			":61:260917C1,5NTRFNONREF//B\n:86:fraction\n" +
			":61:260917C100,NTRFNONREF//\xff\n:86:bad reference\n" +
			":61:260917D50,NTRFNONREF//D\n:86:ok\n" +
			":62F:C260917VND1150,\n"
		lines, skipped, err := Parse(strings.NewReader(in), MT940, Options{}, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := rows(lines); !cmp.Equal(got, []int{3, 9}) {
			t.Errorf("lines at rows %v, want [3 9]", got)
		}
		if len(skipped) != 2 || skipped[0].Row != 5 || skipped[1].Row != 7 {
			t.Errorf("skipped %v", skipped)
		}
		if lines[1].Tx.Accumulated != nil {
			t.Errorf("accumulated after an unknown amount: %d", *lines[1].Tx.Accumulated)
		}
	})
}

func rows(lines []Line) []int {
	var out []int
	for _, l := range lines {
		out = append(out, l.Row)
	}
	return out
}

// TestRowErrorAs: a RowError is a *recon.Error to errors.As, with the row in
// its message and the field in Fields.
func TestRowErrorAs(t *testing.T) {
	_, _, err := Parse(strings.NewReader(csvHead+"2026-09-17,abc,,memo,R1\n"), CSV, Options{}, false)
	var re *recon.Error
	if !errors.As(err, &re) {
		t.Fatalf("errors.As(%T) found no *recon.Error", err)
	}
	if re.Code != recon.EINVALID || re.Message != `row 2: amount_in: "abc" is not an amount` || len(re.Fields["amount_in"]) != 1 {
		t.Errorf("got %+v", re)
	}
	var row *RowError
	if !errors.As(err, &row) || row.Row != 2 {
		t.Errorf("errors.As RowError: %v", row)
	}
	// A RowError around a plain error still converts.
	plain := &RowError{Row: 9, Err: io.ErrUnexpectedEOF}
	if !errors.As(plain, &re) || re.Message != "row 9: unexpected EOF" || !errors.Is(plain, io.ErrUnexpectedEOF) {
		t.Errorf("plain: %+v", re)
	}
}

// TestReaderError: an error of the reader is passed on, not blamed on the file.
func TestReaderError(t *testing.T) {
	boom := errors.New("connection reset")
	for f, head := range map[Format]string{
		CSV:     csvHead,
		CAMT053: `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>`,
		MT940:   ":20:S\n:61:260917C1,NTRFNONREF\n",
	} {
		r := io.MultiReader(strings.NewReader(head), &failingReader{boom})
		_, _, err := Parse(r, f, Options{}, true)
		if !errors.Is(err, boom) || recon.ErrorCode(err) != recon.EINTERNAL {
			t.Errorf("%s: err = %v (code %s), want the reader's error", f, err, recon.ErrorCode(err))
		}
	}
}

type failingReader struct{ err error }

func (r *failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestCSVAmount(t *testing.T) {
	for _, tc := range []struct {
		in     string
		signed bool
		want   int64
		err    string
	}{
		{"150000", false, 150000, ""},
		{" 150000 ", false, 150000, ""},
		{"150000.00", false, 150000, ""},
		{"150000,00", false, 150000, ""},
		{"150000.", false, 150000, ""},
		{"1,500,000", false, 1500000, ""},
		{"1.500.000", false, 1500000, ""},
		{"150.000", false, 150000, ""},
		{"150,000", false, 150000, ""},
		{"1.500", false, 1500, ""},
		{"1500.000", false, 1500, ""},
		{"1,500,000.00", false, 1500000, ""},
		{"1.500.000,00", false, 1500000, ""},
		{"0.00", false, 0, ""},
		{"", false, 0, ""},
		{"-1.500.000", true, -1500000, ""},
		{"+2000", true, 2000, ""},
		{"-2000", false, 0, "must not have a sign"},
		{"150000.50", false, 0, "VND has no minor unit"},
		{"1.500,5", false, 0, "VND has no minor unit"},
		{"0.500", false, 0, "VND has no minor unit"},
		{"1,50,000", false, 0, "grouped by three"},
		{"1.500.00", false, 0, "grouped by three"},
		{"1.500,000.00", false, 0, "grouped by three"},
		{"15 000", false, 0, "not an amount"},
		{"1e6", false, 0, "not an amount"},
		{"VND 100", false, 0, "not an amount"},
		{"-", true, 0, "not an amount"},
		{"1000000000000000", false, 0, "too large"},
		{"999999999999999", false, 999999999999999, ""},
	} {
		got, err := parseCSVAmount(tc.in, tc.signed)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("parseCSVAmount(%q, %v) = %d, %v; want %d, error containing %q", tc.in, tc.signed, got, err, tc.want, tc.err)
		}
	}
}

// TestMT940EntryDateYear: the entry date takes the year nearest the value date.
func TestMT940EntryDateYear(t *testing.T) {
	for _, tc := range []struct{ field, want string }{
		{"2612310102", "2027-01-02"},
		{"2701021231", "2026-12-31"},
		{"2606150616", "2026-06-16"},
		{"260615", "2026-06-15"},
		{"2402290229", "2024-02-29"},
	} {
		e, err := parse61(tc.field + "C1,NTRFNONREF")
		if err != nil || e.date.Format("2006-01-02") != tc.want {
			t.Errorf("parse61(%s) = %v, %v; want %s", tc.field, e.date, err, tc.want)
		}
	}
	if _, err := parse61("2602280230C1,NTRFX"); err == nil {
		t.Error("entry date 0230 accepted")
	}
}

func ExampleParse() {
	const file = "transaction_date;amount;transaction_content;reference_number\n" +
		"17/09/2026 08:15;150.000;NGUYEN VAN A chuyen tien DH1709;FT26260001234\n"
	lines, _, err := Parse(strings.NewReader(file), CSV, Options{}, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range lines {
		fmt.Println(l.Row, l.Tx.TransactionDate.Format("2006-01-02 15:04 -07:00"), l.Tx.AmountIn, l.Tx.Content, l.Tx.ReferenceNumber)
	}
	// Output: 2 2026-09-17 08:15 +07:00 150000 NGUYEN VAN A chuyen tien DH1709 FT26260001234
}

func TestXMLEncoding(t *testing.T) {
	doc := camtDoc("08", "1", "", camtNtry("VND", "1000", "CRDT", "R1"))
	latin := strings.Replace(doc, `encoding="UTF-8"`, `encoding="ISO-8859-1"`, 1)
	if _, _, err := Parse(strings.NewReader(latin), CAMT053, Options{}, false); err == nil || recon.ErrorMessage(err) != "the XML declares the encoding ISO-8859-1: only UTF-8 is supported" {
		t.Errorf("ISO-8859-1: %v", err)
	}
	ascii := strings.Replace(doc, `encoding="UTF-8"`, `encoding="US-ASCII"`, 1)
	if lines, _, err := Parse(strings.NewReader("\ufeff"+ascii), CAMT053, Options{}, false); err != nil || len(lines) != 1 {
		t.Errorf("US-ASCII with a BOM: %d lines, %v", len(lines), err)
	}
}
