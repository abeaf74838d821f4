package statement

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

const benchRows = 100_000

// benchCAMT builds a camt.053.001.08 statement of n entries with opening and
// closing balances, half of them without a bank reference (hashed).
func benchCAMT(n int) []byte {
	var entries strings.Builder
	balance := int64(1_000_000_000)
	opening := balance
	for i := range n {
		amount, ind := int64(10_000+i%500*1_000), "CRDT"
		if i%4 == 3 {
			ind = "DBIT"
			balance -= amount
		} else {
			balance += amount
		}
		ref := ""
		if i%2 == 0 {
			ref = fmt.Sprintf("<AcctSvcrRef>FT26%012d</AcctSvcrRef>", i)
		}
		fmt.Fprintf(&entries, `<Ntry><NtryRef>%d</NtryRef><Amt Ccy="VND">%d.00</Amt><CdtDbtInd>%s</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><DtTm>2026-09-17T%02d:%02d:%02d+07:00</DtTm></BookgDt><ValDt><Dt>2026-09-17</Dt></ValDt>%s
<NtryDtls><TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs><RmtInf><Ustrd>NGUYEN VAN A chuyen tien DH%06d qua ung dung ngan hang</Ustrd></RmtInf></TxDtls></NtryDtls>
</Ntry>
`, i, amount, ind, i/3600%24, i/60%60, i%60, ref, i)
	}
	return []byte(camtDoc("08", "0071001234567",
		xmlBal("OPBD", fmt.Sprint(opening))+xmlBal("CLBD", fmt.Sprint(balance)), entries.String()))
}

// benchCSV builds a CSV file of n rows.
func benchCSV(n int) []byte {
	var b bytes.Buffer
	b.WriteString("transaction_date,amount_in,amount_out,transaction_content,reference_number,accumulated\n")
	for i := range n {
		fmt.Fprintf(&b, "2026-09-17 %02d:%02d:%02d,\"%s\",,NGUYEN VAN A chuyen tien DH%06d,FT26%012d,%d\n",
			i/3600%24, i/60%60, i%60, group(int64(10_000+i%500*1_000), ','), i, i, 1_000_000+i)
	}
	return b.Bytes()
}

func benchParse(b *testing.B, data []byte, f Format) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	runs := 0
	for b.Loop() {
		lines, skipped, err := Parse(bytes.NewReader(data), f, Options{}, false)
		if err != nil || len(lines) != benchRows || len(skipped) != 0 {
			b.Fatalf("%d lines, %v", len(lines), err)
		}
		runs++
	}
	b.ReportMetric(float64(runs*benchRows)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkParseCAMT053_100k(b *testing.B) { benchParse(b, benchCAMT(benchRows), CAMT053) }

func BenchmarkParseCSV_100k(b *testing.B) { benchParse(b, benchCSV(benchRows), CSV) }
