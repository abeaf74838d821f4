package statement

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"recon"
)

// hostileSize is the size of each hostile file: nearly the largest upload
// (recon.MaxStatementBytes), made on the fly and never held in memory.
const hostileSize = 60 << 20

// hostileReader serves prefix, then chunk repeated up to n bytes in all,
// then suffix; every sampleEvery bytes served it reads the heap, so the
// peak is measured while the parser holds what it has read (the parser
// pulls, so samples are ordered by its reads, not by a timer).
type hostileReader struct {
	parts      []string // prefix, chunk, suffix
	n, served  int64
	nextSample int64
	peak       uint64
	stats      runtime.MemStats
}

// goodSize is the size of each good file, read whole.
const goodSize = 24 << 20

const sampleEvery = 1 << 20

// newHostile serves size bytes or a little less: whole chunks.
func newHostile(size int64, prefix, chunk, suffix string) *hostileReader {
	n := int64(len(prefix)) + (size-int64(len(prefix)))/int64(len(chunk))*int64(len(chunk))
	return &hostileReader{parts: []string{prefix, chunk, suffix}, n: n, nextSample: sampleEvery}
}

func (h *hostileReader) sample() {
	runtime.ReadMemStats(&h.stats)
	h.peak = max(h.peak, h.stats.HeapAlloc)
}

func (h *hostileReader) Read(b []byte) (int, error) {
	if h.served >= h.nextSample {
		h.sample()
		h.nextSample = h.served + sampleEvery
	}
	prefix, chunk, suffix := h.parts[0], h.parts[1], h.parts[2]
	total := h.n + int64(len(suffix))
	if h.served >= total {
		return 0, io.EOF
	}
	i := 0
	for i < len(b) && h.served < total {
		var src string
		var off int64
		switch {
		case h.served < int64(len(prefix)):
			src, off = prefix, h.served
		case h.served < h.n:
			src, off = chunk, (h.served-int64(len(prefix)))%int64(len(chunk))
			if rest := h.n - h.served; int64(len(src))-off > rest {
				src = src[:off+rest]
			}
		default:
			src, off = suffix, h.served-h.n
		}
		c := copy(b[i:], src[off:])
		i += c
		h.served += int64(c)
	}
	return i, nil
}

// TestHostileFilesBoundedMemory: every parser reads a hostile file of 60 MB
// (one endless field, line, text node or attribute, endless continuation
// lines, deep nesting, an endless quoted CSV cell, an entry of endless
// subelements) in memory that does not grow with the file, and refuses it
// naming the problem (docs/statements.md, Limits).
func TestHostileFilesBoundedMemory(t *testing.T) {
	const csvHead = "transaction_date,amount_in,transaction_content,reference_number\n"
	const mtHead = ":20:STMT1\n:25:101234567890\n:28C:1/1\n:60F:C261124VND0,\n:61:2611241124C1000,NTRFREF1\n"
	const camtHead = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt><Id>S1</Id>
<Acct><Id><Othr><Id>101234567890</Id></Othr></Id></Acct>
`
	const ntry = `<Ntry><Amt Ccy="VND">1000</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-11-24</Dt></BookgDt>`
	for _, tc := range []struct {
		name                  string
		f                     Format
		prefix, chunk, suffix string
		want                  string // in the error message
	}{
		// Large good files stream: the memory of a parse does not grow
		// with the number of rows either.
		{"csv many rows", CSV, csvHead, "2026-11-24 10:00:00,1000,memo DH1234,R1\n", "", ""},
		{"mt940 many entries", MT940, mtHead + ":86:DH1234\n", ":61:2611241124C1000,NTRFREF1\n:86:memo DH1234\n", "", ""},
		{"camt many entries", CAMT053, camtHead, ntry + "<AcctSvcrRef>R1</AcctSvcrRef></Ntry>\n", "</Stmt></BkToCstmrStmt></Document>", ""},
		{"csv endless line", CSV, csvHead + "2026-11-24 10:00:00,1000,", "AAAAAAAAAAAAAAAA", ",R1\n", "longer than 65536 bytes"},
		{"csv endless quoted cell", CSV, csvHead + "2026-11-24 10:00:00,1000,\"", "memo\n", "\",R1\n", "longer than 65536 bytes"},
		{"csv endless header", CSV, "transaction_date", ",x", "\n", "longer than 65536 bytes"},
		{"mt940 :86: continuation lines", MT940, mtHead + ":86:DH1234\n", "more text of the field\n", ":62F:C261124VND1000,\n", "line 362: field :86: (from line 6) is longer than 8192 bytes"},
		{"mt940 endless line", MT940, mtHead + ":86:", "AAAAAAAAAAAAAAAA", "\n", "line 6: field :86: is longer than 8192 bytes"},
		{"mt940 :61: continuation lines", MT940, mtHead, "supplementary\n", ":62F:C261124VND1000,\n", "field :61: (from line 5) is longer than 8192 bytes"},
		{"mt940 continuation lines starting with '-'", MT940, mtHead + ":86:DH1234\n", "-more text-\n", ":62F:C261124VND1000,\n", "field :86: (from line 6) is longer than 8192 bytes"},
		{"mt940 endless header block", MT940, "{1:F01", "AAAAAAAAAAAAAAAA", "}\n", "longer than 65536 bytes"},
		{"camt endless text node", CAMT053, camtHead + ntry + "<NtryDtls><TxDtls><RmtInf><Ustrd>", "DH1234 memo text ", "</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry></Stmt></BkToCstmrStmt></Document>", "text is longer than 65536 bytes"},
		{"camt endless text before Document", CAMT053, `<?xml version="1.0"?><Envelope>`, "words and words ", "</Envelope>", "text is longer than 65536 bytes"},
		{"camt endless attribute", CAMT053, camtHead + `<Ntry><Amt Ccy="`, "VNDVNDVNDVNDVND ", `">1000</Amt></Ntry></Stmt></BkToCstmrStmt></Document>`, "tag is longer than 65536 bytes"},
		{"camt attribute with '>'", CAMT053, camtHead + `<Bal x="`, "a>b>c>d>e>f>g>h>", `"/></Stmt></BkToCstmrStmt></Document>`, "tag is longer than 65536 bytes"},
		{"camt endless comment", CAMT053, camtHead + "<!--", "a comment <b> - ", "--></Stmt></BkToCstmrStmt></Document>", "comment is longer than"},
		{"camt endless CDATA", CAMT053, camtHead + ntry + "<AddtlNtryInf><![CDATA[", "<x>data</x> ] > ", "]]></AddtlNtryInf></Ntry></Stmt></BkToCstmrStmt></Document>", "CDATA section is longer than"},
		{"camt endless DOCTYPE string", CAMT053, `<?xml version="1.0"?><!DOCTYPE Document SYSTEM "`, "x></a>x></a>", `"><Document/>`, "declaration is longer than"},
		{"camt deep nesting", CAMT053, `<?xml version="1.0"?>`, "<a>", "", "nested deeper than 100"},
		{"camt deep nesting in a statement", CAMT053, camtHead + "<Unknown>", "<a>", "", "nested deeper than 100"},
		{"camt entry of endless subelements", CAMT053, camtHead + ntry + "<NtryDtls><TxDtls><RmtInf>", "<Ustrd>DH1234 memo</Ustrd>", "</RmtInf></TxDtls></NtryDtls></Ntry></Stmt></BkToCstmrStmt></Document>", "the Ntry element is longer than 4194304 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC()
			size := int64(hostileSize)
			if tc.want == "" {
				size = goodSize // read to the end: smaller, for time
			}
			h := newHostile(size, tc.prefix, tc.chunk, tc.suffix)
			h.sample()
			base := h.peak
			err := ParseFunc(h, tc.f, Options{}, false, func(Line) error { return nil }, nil)
			h.sample()
			if tc.want == "" && err != nil {
				t.Errorf("err = %.300v; want none", err)
			} else if tc.want != "" && (recon.ErrorCode(err) != recon.EINVALID || !strings.Contains(recon.ErrorMessage(err), tc.want)) {
				t.Errorf("err = %.300v; want EINVALID containing %q", err, tc.want)
			}
			// The bound is far below the file's 60 MB: a parser holding the
			// field, line or element whole would pass it several times over.
			const bound = 16 << 20 // an element read whole (MaxCAMTElementBytes) takes about 10
			grew := int64(h.peak) - int64(base)
			if grew > bound {
				t.Errorf("the heap grew by %d MiB reading %d MiB of a %d MiB file; want at most %d MiB", grew>>20, h.served>>20, h.n>>20, bound>>20)
			}
			t.Logf("the heap grew by %d KiB reading %d KiB", grew>>10, h.served>>10)
		})
	}
}

// distinctRows serves an MT940 statement of n different entries without a
// reference (NONREF: each gets a hash for its reference, numbered among
// identical ones), made on the fly; every 100,000 rows it collects garbage
// and keeps the peak of the live heap.
type distinctRows struct {
	i, n  int
	buf   []byte
	peak  uint64
	stats runtime.MemStats
}

func (d *distinctRows) Read(b []byte) (int, error) {
	for len(d.buf) < len(b) && d.i < d.n {
		if d.i == 0 {
			d.buf = append(d.buf, ":20:STMT1\n:25:101234567890\n:28C:1/1\n:60F:C261124VND0,\n"...)
		}
		d.i++
		d.buf = fmt.Appendf(d.buf, ":61:2611241124C%d,NTRFNONREF\n:86:memo %d\n", d.i, d.i)
		if d.i%100_000 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&d.stats)
			d.peak = max(d.peak, d.stats.HeapAlloc)
		}
	}
	if len(d.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(b, d.buf)
	d.buf = d.buf[n:]
	return n, nil
}

// TestReferencelessRowsMemory: what a parse keeps per entry without a
// reference (to number identical ones) is a small fingerprint, not the
// whole hash: a million such rows (a 50 MB file) keep under 48 MiB live
// (full hashes kept 95 MiB). docs/statements.md, Limits.
func TestReferencelessRowsMemory(t *testing.T) {
	runtime.GC()
	d := &distinctRows{n: 1_000_000}
	runtime.ReadMemStats(&d.stats)
	base := d.stats.HeapAlloc
	n := 0
	if err := ParseFunc(d, MT940, Options{}, false, func(Line) error { n++; return nil }, nil); err != nil || n != d.n {
		t.Fatalf("%d rows, %v", n, err)
	}
	if grew := int64(d.peak) - int64(base); grew > 48<<20 {
		t.Errorf("the live heap grew by %d MiB for %d rows without a reference; want at most 48 MiB", grew>>20, n)
	}
}
