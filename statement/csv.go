package statement

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"recon"
)

// CSV column names.
const (
	colDate        = "transaction_date"
	colAmountIn    = "amount_in"
	colAmountOut   = "amount_out"
	colAmount      = "amount"
	colContent     = "transaction_content"
	colReference   = "reference_number"
	colAccumulated = "accumulated"
	colSubAccount  = "sub_account"
	// colOtherRefs holds other references of the same transfer, separated
	// by ';' (docs/statements.md, References).
	colOtherRefs = "other_references"
)

// csvColumns lists the known columns in the order of the documentation.
func csvColumns() []string {
	return []string{colDate, colAmountIn, colAmountOut, colAmount, colContent, colReference, colAccumulated, colSubAccount, colOtherRefs}
}

// csvLayout is the position of each known column, -1 when absent.
type csvLayout struct {
	col      map[string]int
	nameless []int // columns with an empty header cell
}

func (l *csvLayout) has(name string) bool { return l.col[name] >= 0 }

func (l *csvLayout) cell(rec []string, name string) string {
	if i := l.col[name]; i >= 0 && i < len(rec) {
		return rec[i]
	}
	return ""
}

func (p *parser) parseCSV(r io.Reader) error {
	br := newBufReader(r)
	head, _ := br.Peek(8 << 10)
	if hasPrefix(head, "\xff\xfe") || hasPrefix(head, "\xfe\xff") {
		return fileErr("the file is UTF-16 text: save it as CSV UTF-8").Saying("st_utf16")
	}
	comma := csvSeparator(head)
	cr := csv.NewReader(newCSVLimiter(br, MaxLineBytes, comma))
	cr.Comma = comma
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1 // title lines of bank exports have fewer cells: counted below
	return p.parseTable(&csvSource{cr: cr})
}

// tableSource is a file read as rows of cells: a CSV file or a worksheet.
type tableSource interface {
	// next returns the next row and its 1-based row number; io.EOF at the
	// end. A *RowError is a problem of that row only; any other error
	// ends the file. rec may be reused by the following call.
	next() (rec []string, row int, err error)
}

// csvSource reads a CSV file.
type csvSource struct{ cr *csv.Reader }

func (s *csvSource) next() ([]string, int, error) {
	rec, err := s.cr.Read()
	if err == io.EOF {
		return nil, 0, io.EOF
	}
	if err != nil {
		var pe *csv.ParseError
		if !errors.As(err, &pe) {
			return nil, 0, csvFileErr(err)
		}
		re := rowErr(pe.StartLine, "row", "%s", pe.Err.Error()).saying("st_row_malformed")
		re.Err.(*recon.Error).Err = pe // the header's problem is the file's: csvFileErr
		return nil, pe.StartLine, re
	}
	row, _ := s.cr.FieldPos(0)
	return rec, row, nil
}

// parseTable reads a table: in Recon's own CSV layout when its first row is
// that header (and no mapping is given), else as a bank export whose header
// row, recognised by its names (bankAliases) or by the mapping, comes within
// the first maxTitleRows rows.
func (p *parser) parseTable(t tableSource) error {
	rec, row, err := t.next()
	if err == io.EOF {
		return fileErr("the file is empty: a header row is required").Saying("st_no_header")
	}
	if err != nil {
		return csvFileErr(err)
	}
	own, ownErr := csvHeader(rec)
	if ownErr == nil {
		return p.ownRows(t, own, len(rec))
	}
	firstOwn, allOwn := ownNames(rec)
	if allOwn {
		return ownErr // Recon's own layout, wrong: say what is wrong
	}
	var re *RowError
	for i := 0; ; i++ {
		if err == nil {
			l := recogniseBankHeader(rec, row, p.mapping)
			if l == nil && p.mapping != nil {
				l = recogniseBankHeader(rec, row, nil)
			}
			if l != nil {
				return p.bankRows(t, l)
			}
		}
		if i == maxTitleRows {
			break
		}
		rec, row, err = t.next()
		if err == io.EOF {
			break
		}
		if err != nil && !errors.As(err, &re) {
			return err
		}
	}
	switch {
	case p.mapping != nil:
		return fileErr("no header row holding the columns of the bank account's saved mapping (%s) in the first %d rows", p.mappingNames(), maxTitleRows+1)
	case firstOwn:
		return ownErr
	}
	return fileErr("no header row found in the first %d rows: Recon recognises the columns of the usual Vietnamese bank exports (%s), and Recon's own CSV columns (%s); for another layout, save a column mapping for the bank account", maxTitleRows+1,
		"Ngày giao dịch, Số tiền ghi nợ, Số tiền ghi có, Nội dung / Diễn giải, Số dư, Số bút toán / Số tham chiếu", strings.Join(csvColumns(), ", "))
}

// ownNames reports whether a header row names one of Recon's own CSV
// columns (some), and whether all its named cells are such names (all).
func ownNames(rec []string) (some, all bool) {
	all = true
	for _, h := range rec {
		name := strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, bom))))
		if name == "" {
			continue
		}
		if slices.Contains(csvColumns(), name) {
			some = true
		} else {
			all = false
		}
	}
	return some, some && all
}

// mappingNames lists the headers the mapping names, for messages.
func (p *parser) mappingNames() string {
	var names []string
	f := mappingFields(p.mapping)
	for _, k := range bankFields {
		if h, ok := f[k]; ok {
			names = append(names, fmt.Sprintf("%q", h))
		}
	}
	return strings.Join(names, ", ")
}

// ownRows reads the rows under a header of Recon's own CSV layout.
func (p *parser) ownRows(t tableSource, layout *csvLayout, width int) error {
	for {
		rec, row, err := t.next()
		if err == io.EOF {
			return nil
		}
		var re *RowError
		if errors.As(err, &re) {
			if e := p.bad(re); e != nil {
				return e
			}
			continue
		}
		if err != nil {
			return err
		}
		if blankRecord(rec) {
			continue
		}
		if len(rec) != width {
			if e := p.bad(rowErr(row, "row", "has %d cells, the header has %d", len(rec), width)); e != nil {
				return e
			}
			continue
		}
		tx, rerr := p.csvRow(row, rec, layout)
		if rerr != nil {
			if e := p.bad(rerr); e != nil {
				return e
			}
			continue
		}
		if err := p.add(row, tx); err != nil {
			return err
		}
	}
}

// bankRows reads the rows under a bank export's header: a second header
// line (English names under Vietnamese ones), blank rows, and the totals,
// closing balances and signatures under the transactions are skipped.
func (p *parser) bankRows(t tableSource, l *bankLayout) error {
	first := true
	for {
		rec, row, err := t.next()
		if err == io.EOF {
			return nil
		}
		var re *RowError
		if errors.As(err, &re) {
			if e := p.bad(re); e != nil {
				return e
			}
			continue
		}
		if err != nil {
			return err
		}
		if blankRecord(rec) {
			continue
		}
		if first {
			first = false
			if isSecondHeader(rec) {
				continue
			}
		}
		if isSummaryRow(rec, l) {
			continue
		}
		tx, rerr := p.bankRow(row, rec, l)
		if rerr != nil {
			if e := p.bad(rerr); e != nil {
				return e
			}
			continue
		}
		if err := p.add(row, tx); err != nil {
			return err
		}
	}
}

// csvFileErr turns an error reading the header or the file into a file-level error.
func csvFileErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fileErr("CSV line %d: %v", pe.StartLine, pe.Err).Saying("st_csv_line", strconv.Itoa(pe.StartLine))
	}
	return err // the reader's own error: passed on as it is
}

// csvSeparator picks the separator the header line holds most of: comma,
// semicolon or tab (comma on a tie). When the first line holds none (a bank
// export's title), the first 8 KiB are counted instead.
func csvSeparator(head []byte) rune {
	if i := bytes.IndexByte(head, '\n'); i >= 0 && bytes.ContainsAny(head[:i], ",;\t") {
		head = head[:i]
	}
	best, n := ',', bytes.Count(head, []byte{','})
	for _, sep := range []rune{';', '\t'} {
		if c := bytes.Count(head, []byte{byte(sep)}); c > n {
			best, n = sep, c
		}
	}
	return best
}

// csvHeader maps the header row's names to column positions.
func csvHeader(header []string) (*csvLayout, error) {
	columns := csvColumns()
	l := &csvLayout{col: make(map[string]int, len(columns))}
	for _, c := range columns {
		l.col[c] = -1
	}
	var unknown, repeated []string
	for i, h := range header {
		name := strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, bom))))
		if name == "" {
			l.nameless = append(l.nameless, i)
			continue
		}
		pos, known := l.col[name]
		switch {
		case !known:
			unknown = append(unknown, fmt.Sprintf("%q", strings.TrimSpace(h)))
		case pos >= 0:
			repeated = append(repeated, name)
		default:
			l.col[name] = i
		}
	}
	known := strings.Join(columns, ", ")
	if len(unknown) > 0 {
		return nil, fileErr("unknown CSV column %s: the known columns are %s", strings.Join(unknown, ", "), known).
			Saying("st_unknown_column", strings.Join(unknown, ", "), known)
	}
	if len(repeated) > 0 {
		return nil, fileErr("CSV column %s appears more than once", strings.Join(repeated, ", ")).Saying("st_repeated_column", strings.Join(repeated, ", "))
	}
	var missing []string
	for _, c := range []string{colDate, colContent, colReference} {
		if !l.has(c) {
			missing = append(missing, c)
		}
	}
	if !l.has(colAmount) && !l.has(colAmountIn) && !l.has(colAmountOut) {
		missing = append(missing, "amount_in and/or amount_out (or a signed amount)")
	}
	if len(missing) > 0 {
		return nil, fileErr("missing CSV column %s: the known columns are %s", strings.Join(missing, ", "), known).
			Saying("st_missing_column", strings.Join(missing, ", "), known)
	}
	if l.has(colAmount) && (l.has(colAmountIn) || l.has(colAmountOut)) {
		return nil, fileErr("CSV has both amount and amount_in/amount_out columns: use one or the other").Saying("st_both_amount_columns")
	}
	return l, nil
}

func blankRecord(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// csvRow reads one data row.
func (p *parser) csvRow(row int, rec []string, l *csvLayout) (recon.TransactionInput, *RowError) {
	var tx recon.TransactionInput
	for _, i := range l.nameless {
		if strings.TrimSpace(rec[i]) != "" {
			return tx, rowErr(row, fmt.Sprintf("column %d", i+1), "has a value but no name in the header row").saying("st_row_nameless", strconv.Itoa(i+1))
		}
	}
	t, err := parseCSVDate(l.cell(rec, colDate), p.loc)
	if err != nil {
		return tx, rowErr(row, colDate, "%v", err).saying("st_row_date", colDate)
	}
	tx.TransactionDate = t
	if l.has(colAmount) {
		cell := l.cell(rec, colAmount)
		v, err := parseCSVAmount(cell, true)
		switch {
		case err != nil:
			return tx, rowErr(row, colAmount, "%v", err).saying("st_row_amount", colAmount)
		case strings.TrimSpace(cell) == "":
			return tx, rowErr(row, colAmount, "is empty").saying("st_row_empty", colAmount)
		case v == 0:
			return tx, rowErr(row, colAmount, "is zero").saying("st_row_zero", colAmount)
		case v > 0:
			tx.AmountIn = v
		default:
			tx.AmountOut = -v
		}
	} else {
		for _, c := range []struct {
			name string
			dst  *int64
		}{{colAmountIn, &tx.AmountIn}, {colAmountOut, &tx.AmountOut}} {
			v, err := parseCSVAmount(l.cell(rec, c.name), false)
			if err != nil {
				return tx, rowErr(row, c.name, "%v", err).saying("st_row_amount", c.name)
			}
			*c.dst = v
		}
		field := colAmountIn
		if !l.has(colAmountIn) {
			field = colAmountOut
		}
		switch {
		case tx.AmountIn != 0 && tx.AmountOut != 0:
			return tx, rowErr(row, colAmountIn, "both amount_in (%d) and amount_out (%d) are set: a row is money in or money out", tx.AmountIn, tx.AmountOut).
				saying("st_row_both_amounts")
		case tx.AmountIn == 0 && tx.AmountOut == 0:
			return tx, rowErr(row, field, "no amount: amount_in and amount_out are empty or zero").saying("st_row_no_amount")
		}
	}
	ref := strings.TrimSpace(l.cell(rec, colReference))
	switch {
	case ref == "":
		return tx, rowErr(row, colReference, "is empty: every row needs the bank's reference").saying("st_row_no_reference", colReference)
	case !utf8.ValidString(ref):
		return tx, rowErr(row, colReference, "is not valid UTF-8 (save the file as CSV UTF-8)").saying("st_row_utf8", colReference)
	}
	tx.ReferenceNumber = ref
	text, rerr := content(row, colContent, l.cell(rec, colContent))
	if rerr != nil {
		return tx, rerr
	}
	tx.Content = text
	if cell := l.cell(rec, colAccumulated); strings.TrimSpace(cell) != "" {
		v, err := parseCSVAmount(cell, true)
		if err != nil {
			return tx, rowErr(row, colAccumulated, "%v", err).saying("st_row_amount", colAccumulated)
		}
		tx.Accumulated = &v
	}
	sub, rerr := content(row, colSubAccount, l.cell(rec, colSubAccount))
	if rerr != nil {
		return tx, rerr
	}
	tx.SubAccount = sub
	if cell := l.cell(rec, colOtherRefs); strings.TrimSpace(cell) != "" {
		tx.References = recon.CleanReferences(ref, usableRefs(strings.Split(cell, ";")))
	}
	return tx, nil
}
