package statement

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"recon"
)

// Bank layouts: the statement exports of Vietnamese banks (docs/statements.md,
// Bank exports). Their header row, in Vietnamese or bilingual, comes after
// title and account lines; its columns are recognised by name (bankAliases),
// extra columns are ignored, and the rows after it are read by bankRow.

// maxTitleRows is how many rows before the header row a bank export may
// hold (bank name, account, period, blank lines).
const maxTitleRows = 30

// The fields of a bank layout. They are the CSV column names, so that a
// mapping (ColumnMapping) and the messages use the documented words.
var bankFields = []string{colDate, colAmountIn, colAmountOut, colAmount, colContent, colReference, colAccumulated, colSubAccount}

// bankAliases maps a folded header name (foldHeader) to a field; "" marks a
// column known and ignored (a row number, a value date, the counterparty).
// Bilingual headers ("Ngày giao dịch / Transaction date") are split on "/",
// "(" and line breaks and each part is tried.
var bankAliases = map[string]string{
	// date
	"ngay giao dich": colDate, "ngay gd": colDate, "ngay hach toan": colDate, "ngay": colDate,
	"ngay thuc hien": colDate, "thoi gian giao dich": colDate, "thoi gian": colDate, "ngay ghi so": colDate,
	"ngay gio giao dich": colDate, "transaction date": colDate, "txn date": colDate, "tnx date": colDate,
	"posting date": colDate, "booking date": colDate, "date": colDate, "ngay giao dich thuc te": colDate,
	// money out
	"so tien ghi no": colAmountOut, "ghi no": colAmountOut, "no": colAmountOut, "phat sinh no": colAmountOut,
	"so tien no": colAmountOut, "tien ra": colAmountOut, "so tien rut": colAmountOut, "debit": colAmountOut,
	"debit amount": colAmountOut, "so tien chuyen": colAmountOut, "ps no": colAmountOut, "rut ra": colAmountOut,
	// money in
	"so tien ghi co": colAmountIn, "ghi co": colAmountIn, "co": colAmountIn, "phat sinh co": colAmountIn,
	"so tien co": colAmountIn, "tien vao": colAmountIn, "so tien nhan": colAmountIn, "credit": colAmountIn,
	"credit amount": colAmountIn, "ps co": colAmountIn, "gui vao": colAmountIn,
	// signed amount
	"so tien": colAmount, "so tien giao dich": colAmount, "amount": colAmount, "so tien phat sinh": colAmount,
	// memo
	"noi dung": colContent, "dien giai": colContent, "noi dung giao dich": colContent, "mo ta": colContent,
	"noi dung chi tiet": colContent, "chi tiet giao dich": colContent, "noi dung chuyen khoan": colContent,
	"description": colContent, "transaction description": colContent, "details": colContent,
	"transaction details": colContent, "remark": colContent, "remarks": colContent, "narrative": colContent,
	"transaction content": colContent, "dien giai giao dich": colContent,
	// reference
	"so but toan": colReference, "so tham chieu": colReference, "ma giao dich": colReference,
	"so giao dich": colReference, "ma gd": colReference, "so gd": colReference, "so ct": colReference,
	"so chung tu": colReference, "ma tham chieu": colReference, "so ref": colReference, "ref": colReference,
	"reference": colReference, "reference no": colReference, "ref no": colReference, "transaction no": colReference,
	"transaction id": colReference, "ma but toan": colReference, "so hieu giao dich": colReference,
	"doc no": colReference, "reference no.": colReference, "ref no.": colReference, "doc no.": colReference, "ref.": colReference, "reference number": colReference, "so but toan he thong": colReference,
	// balance
	"so du": colAccumulated, "so du cuoi": colAccumulated, "so du sau giao dich": colAccumulated,
	"so du tai khoan": colAccumulated, "balance": colAccumulated, "running balance": colAccumulated,
	"so du luy ke": colAccumulated, "so du cuoi ngay": colAccumulated,
	// virtual account
	"tai khoan ao": colSubAccount, "so tai khoan ao": colSubAccount, "virtual account": colSubAccount,
	"sub account": colSubAccount, "tai khoan phu": colSubAccount,
	// known, ignored
	"stt": "", "no.": "", "so thu tu": "", "seq": "", "ngay hieu luc": "", "value date": "", "effective date": "",
	"ngay gia tri": "", "doi tac": "", "tai khoan doi ung": "", "so tai khoan doi ung": "", "ten doi ung": "",
	"ten tai khoan doi ung": "", "ngan hang doi ung": "", "ten ngan hang doi ung": "", "kenh giao dich": "",
	"loai tien": "", "currency": "", "ccy": "", "loai giao dich": "", "ma chi nhanh": "", "chi nhanh": "",
	"beneficiary": "", "remitter": "", "counterparty": "", "account name": "", "account no": "",
	"ten nguoi chuyen": "", "tai khoan nguoi chuyen": "", "ngan hang nguoi chuyen": "", "ghi chu": "",
	"time": "", "gio": "", "phi": "", "fee": "", "vat": "", "so tai khoan": "", "ten tai khoan": "",
	"transaction type": "", "channel": "",
}

// vnFold maps the Vietnamese letters with marks to their base letter.
var vnFold = func() map[rune]rune {
	m := map[rune]rune{'đ': 'd'}
	for base, marked := range map[rune]string{
		'a': "àáảãạăằắẳẵặâầấẩẫậ", 'e': "èéẻẽẹêềếểễệ", 'i': "ìíỉĩị",
		'o': "òóỏõọôồốổỗộơờớởỡợ", 'u': "ùúủũụưừứửữự", 'y': "ỳýỷỹỵ",
	} {
		for _, r := range marked {
			m[r] = base
		}
	}
	return m
}()

// foldHeader lowercases a header name, drops its Vietnamese marks (also when
// written as combining marks), a byte-order mark, ":" and "*", and folds runs
// of white space, "_" and "-" into one space: "Số tiền ghi có" and "SO TIEN
// GHI CO" both fold to "so tien ghi co".
func foldHeader(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(strings.TrimPrefix(s, bom)) {
		if f, ok := vnFold[r]; ok {
			r = f
		}
		switch {
		case unicode.Is(unicode.Mn, r), r == ':', r == '*':
			continue
		case unicode.IsSpace(r), r == '_', r == '-':
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// headerField returns the field a bank header cell names: ok is false when the
// name is not known; field is "" for a known column that is ignored. Units
// in parentheses ("Số tiền ghi có (VND)") are dropped; a bilingual name
// ("Ngày giao dịch / Transaction date", or on two lines) is known when one of
// its parts is.
func headerField(cell string) (field string, ok bool) {
	f := foldHeader(cell)
	if f == "" {
		return "", false
	}
	if v, known := bankAliases[f]; known {
		return v, true
	}
	parts := strings.FieldsFunc(strings.ToLower(strings.TrimPrefix(cell, bom)), func(r rune) bool {
		return r == '/' || r == '\n' || r == '\r' || r == '(' || r == ')' || r == '|'
	})
	ignored := false
	for _, p := range parts {
		v, known := bankAliases[foldHeader(p)]
		switch {
		case known && v != "":
			return v, true
		case known:
			ignored = true
		}
	}
	return "", ignored
}

// ColumnMapping names, for a layout Recon does not recognise by itself, the
// header of each column of the file (as written, case and Vietnamese marks
// ignored): it is saved per bank account (docs/statements.md, Column
// mappings). Date, Content and Amount or AmountIn / AmountOut are required;
// without Reference, a row's reference is a hash of the row.
type ColumnMapping = recon.StatementMapping

// mappingFields returns the mapping's headers by field, non-empty ones only.
func mappingFields(m *ColumnMapping) map[string]string {
	out := map[string]string{}
	for f, h := range map[string]string{
		colDate: m.Date, colAmountIn: m.AmountIn, colAmountOut: m.AmountOut, colAmount: m.Amount,
		colContent: m.Content, colReference: m.Reference, colAccumulated: m.Balance, colSubAccount: m.SubAccount,
	} {
		if h = strings.TrimSpace(h); h != "" {
			out[f] = h
		}
	}
	return out
}

// MaxMappingHeader bounds the length of a header name in a ColumnMapping.
const MaxMappingHeader = 200

// ValidateMapping checks a mapping: the required columns named, no header
// named twice, names at most MaxMappingHeader bytes.
func ValidateMapping(m *ColumnMapping) error {
	f := mappingFields(m)
	seen := map[string]string{}
	for _, name := range []struct{ field, json string }{
		{colDate, "date"}, {colAmountIn, "amount_in"}, {colAmountOut, "amount_out"}, {colAmount, "amount"},
		{colContent, "content"}, {colReference, "reference"}, {colAccumulated, "balance"}, {colSubAccount, "sub_account"},
	} {
		h, ok := f[name.field]
		if !ok {
			continue
		}
		if len(h) > MaxMappingHeader {
			return fieldErr(name.json, "the column name is longer than %d bytes", MaxMappingHeader)
		}
		k := foldHeader(h)
		if other, dup := seen[k]; dup {
			return fieldErr(name.json, "names the same column %q as %s", h, other)
		}
		seen[k] = name.json
	}
	if len(m.OtherReferences) > recon.MaxOtherReferences {
		return fieldErr("other_references", "at most %d columns", recon.MaxOtherReferences)
	}
	for _, h := range m.OtherReferences {
		h = strings.TrimSpace(h)
		if h == "" || len(h) > MaxMappingHeader {
			return fieldErr("other_references", "each column name must be 1 to %d bytes", MaxMappingHeader)
		}
		k := foldHeader(h)
		if other, dup := seen[k]; dup {
			return fieldErr("other_references", "names the same column %q as %s", h, other)
		}
		seen[k] = "other_references"
	}
	switch {
	case f[colDate] == "":
		return fieldErr("date", "the column of the transaction date is required")
	case f[colContent] == "":
		return fieldErr("content", "the column of the transfer memo is required")
	case f[colAmount] == "" && f[colAmountIn] == "" && f[colAmountOut] == "":
		return fieldErr("amount_in", "name the column of the money in (amount_in), of the money out (amount_out), or of a signed amount (amount)")
	case f[colAmount] != "" && (f[colAmountIn] != "" || f[colAmountOut] != ""):
		return fieldErr("amount", "a signed amount column and amount_in / amount_out columns exclude each other")
	}
	return nil
}

func fieldErr(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	err := fileErr("%s: %s", field, msg)
	err.Fields = map[string][]string{field: {msg}}
	return err
}

// bankLayout is where the fields are in a bank export's rows.
type bankLayout struct {
	col map[string]int // field -> column, -1 when absent
	// refCols are the columns of other references: a mapping's
	// other_references, or a second recognised reference column.
	refCols []int
	names   map[string]string // field -> the header as written, for messages
	// headerRow is the header's row; bilingual is true once the row after
	// it has been checked for a second header line.
	headerRow int
}

func (l *bankLayout) has(f string) bool { return l.col[f] >= 0 }

func (l *bankLayout) cell(rec []string, f string) string {
	if i := l.col[f]; i >= 0 && i < len(rec) {
		return rec[i]
	}
	return ""
}

// name is the header of a field as the file writes it, on one line.
func (l *bankLayout) name(f string) string {
	return strings.Join(strings.Fields(l.names[f]), " ")
}

// recogniseBankHeader returns the layout of rec when it is a bank export's
// header row: a date, a memo and an amount column recognised (ignored and
// unknown columns allowed, a field named twice not: the first one is kept
// unless the second is an exact name of it). With a mapping, the row must
// hold every column the mapping names instead.
func recogniseBankHeader(rec []string, row int, m *ColumnMapping) *bankLayout {
	l := &bankLayout{col: map[string]int{}, names: map[string]string{}, headerRow: row}
	for _, f := range bankFields {
		l.col[f] = -1
	}
	if m != nil {
		for f, h := range mappingFields(m) {
			want := foldHeader(h)
			for i, c := range rec {
				if foldHeader(c) == want || foldHeader(strings.Join(strings.Fields(c), " ")) == want {
					l.col[f], l.names[f] = i, c
					break
				}
			}
			if l.col[f] < 0 {
				return nil
			}
		}
		for _, h := range m.OtherReferences {
			want, found := foldHeader(h), false
			for i, c := range rec {
				if foldHeader(c) == want || foldHeader(strings.Join(strings.Fields(c), " ")) == want {
					l.refCols, found = append(l.refCols, i), true
					break
				}
			}
			if !found {
				return nil
			}
		}
		return l
	}
	for i, c := range rec {
		f, ok := headerField(c)
		if ok && f == colReference && l.col[f] >= 0 {
			l.refCols = append(l.refCols, i) // a second reference column: kept as another reference
			continue
		}
		if !ok || f == "" || l.col[f] >= 0 {
			continue
		}
		l.col[f], l.names[f] = i, c
	}
	if !l.has(colDate) || !l.has(colContent) {
		return nil
	}
	if l.has(colAmount) && (l.has(colAmountIn) || l.has(colAmountOut)) {
		l.col[colAmount] = -1 // "Số tiền" beside "Ghi nợ"/"Ghi có" is a total: the split wins
	}
	if !l.has(colAmount) && !l.has(colAmountIn) && !l.has(colAmountOut) {
		return nil
	}
	return l
}

// isSecondHeader reports whether rec, the row under a header, is its second
// line (the English names under the Vietnamese ones): every non-empty cell a
// known header name.
func isSecondHeader(rec []string) bool {
	n := 0
	for _, c := range rec {
		if strings.TrimSpace(c) == "" {
			continue
		}
		if _, ok := headerField(c); !ok {
			return false
		}
		n++
	}
	return n > 0
}

// summaryWords start the total and closing lines under a bank export's
// transactions ("Tổng cộng", "Số dư cuối kỳ"), folded.
var summaryWords = []string{"tong", "cong phat sinh", "so du dau ky", "so du cuoi ky", "so du dau", "so du cuoi", "total", "closing balance", "opening balance", "doanh so"}

// isSummaryRow reports whether a row is a total, a closing balance, a
// signature or a note under the transactions: its first cell with text
// starts with one of summaryWords, or it has no date, no reference and no
// amount. It is skipped.
func isSummaryRow(rec []string, l *bankLayout) bool {
	for _, c := range rec {
		f := foldHeader(c)
		if f == "" {
			continue
		}
		for _, w := range summaryWords {
			if strings.HasPrefix(f, w) {
				return true
			}
		}
		break
	}
	if strings.TrimSpace(l.cell(rec, colDate)) != "" || strings.TrimSpace(l.cell(rec, colReference)) != "" {
		return false
	}
	for _, f := range []string{colAmountIn, colAmountOut, colAmount} {
		if v, err := bankAmount(l.cell(rec, f), true); err == nil && v != 0 {
			return false
		}
	}
	return true
}

// bankAmount parses an amount cell of a bank export: what parseCSVAmount
// takes, with a sign allowed (a debit column may write "-500.000"), spaces
// inside ("1 500 000"), a currency after it ("1.500.000 VND", "1.500.000đ")
// and, from a spreadsheet, a number in exponent form ("1.5E+06"). It returns
// the absolute value for the in and out columns (signed false).
func bankAmount(s string, signed bool) (int64, error) {
	s = strings.TrimSpace(s)
	for _, suffix := range []string{"VND", "vnd", "VNĐ", "vnđ", "đ", "Đ"} {
		s = strings.TrimSpace(strings.TrimSuffix(s, suffix))
	}
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\u00a0' || r == '\u202f' {
			return -1
		}
		return r
	}, s)
	if strings.ContainsAny(s, "eE") {
		return expAmount(s, signed)
	}
	if len(s) > 2 && s[0] == '(' && s[len(s)-1] == ')' { // accounting negative
		s = "-" + s[1:len(s)-1]
	}
	v, err := parseCSVAmount(s, true)
	if err != nil {
		return 0, err
	}
	if !signed && v < 0 {
		v = -v
	}
	return v, nil
}

// bankRow reads one transaction row of a bank export. Messages name the
// column by its header in the file.
func (p *parser) bankRow(row int, rec []string, l *bankLayout) (recon.TransactionInput, *RowError) {
	var tx recon.TransactionInput
	dateCell := l.cell(rec, colDate)
	t, err := p.bankDate(dateCell)
	if err != nil {
		return tx, rowErr(row, l.name(colDate), "%v", err)
	}
	tx.TransactionDate = t
	if l.has(colAmount) {
		cell := l.cell(rec, colAmount)
		v, err := bankAmount(cell, true)
		switch {
		case err != nil:
			return tx, rowErr(row, l.name(colAmount), "%v", err)
		case strings.TrimSpace(cell) == "":
			return tx, rowErr(row, l.name(colAmount), "is empty")
		case v == 0:
			return tx, rowErr(row, l.name(colAmount), "is zero")
		case v > 0:
			tx.AmountIn = v
		default:
			tx.AmountOut = -v
		}
	} else {
		for _, c := range []struct {
			field string
			dst   *int64
		}{{colAmountIn, &tx.AmountIn}, {colAmountOut, &tx.AmountOut}} {
			if !l.has(c.field) {
				continue
			}
			v, err := bankAmount(l.cell(rec, c.field), false)
			if err != nil {
				return tx, rowErr(row, l.name(c.field), "%v", err)
			}
			*c.dst = v
		}
		field := colAmountIn
		if !l.has(colAmountIn) {
			field = colAmountOut
		}
		switch {
		case tx.AmountIn != 0 && tx.AmountOut != 0:
			return tx, rowErr(row, l.name(colAmountIn), "both %s (%d) and %s (%d) are set: a row is money in or money out", l.name(colAmountIn), tx.AmountIn, l.name(colAmountOut), tx.AmountOut)
		case tx.AmountIn == 0 && tx.AmountOut == 0:
			return tx, rowErr(row, l.name(field), "no amount: the money in and money out cells are empty or zero")
		}
	}
	text, rerr := content(row, l.name(colContent), l.cell(rec, colContent))
	if rerr != nil {
		return tx, rerr
	}
	tx.Content = text
	var balance string
	if cell := l.cell(rec, colAccumulated); strings.TrimSpace(cell) != "" {
		v, err := bankAmount(cell, true)
		if err != nil {
			return tx, rowErr(row, l.name(colAccumulated), "%v", err)
		}
		tx.Accumulated = &v
		balance = strconv.FormatInt(v, 10)
	}
	sub, rerr := content(row, l.name(colSubAccount), l.cell(rec, colSubAccount))
	if rerr != nil {
		return tx, rerr
	}
	tx.SubAccount = sub
	ref := strings.TrimSpace(l.cell(rec, colReference))
	switch {
	case !utf8.ValidString(ref):
		return tx, rowErr(row, l.name(colReference), "is not valid UTF-8 (save the file as UTF-8)")
	case len(ref) > maxReference:
		return tx, rowErr(row, l.name(colReference), "is longer than %d bytes", maxReference)
	case ref == "" && l.has(colReference):
		return tx, rowErr(row, l.name(colReference), "is empty: every row needs the bank's reference")
	case ref == "":
		// No reference column (docs/statements.md, Bank exports): a hash of
		// the row as the bank wrote it.
		ref = p.hashRef("bank", strings.TrimSpace(dateCell), strconv.FormatInt(tx.AmountIn, 10), strconv.FormatInt(tx.AmountOut, 10), text, balance)
	}
	tx.ReferenceNumber = ref
	var refs []string
	for _, i := range l.refCols {
		if i < len(rec) {
			refs = append(refs, rec[i])
		}
	}
	tx.References = recon.CleanReferences(ref, usableRefs(refs))
	return tx, nil
}

// maxReference bounds a reference read from a bank export.
const maxReference = 255

// bankDate parses the date of a bank export: what parseCSVDate takes, with
// "-" or "." between day, month and year too (day first), a two-digit year,
// and, from a spreadsheet, a date cell (Excel's serial day number).
func (p *parser) bankDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if p.serialDates && isSerial(s) {
		return serialDate(s, p.loc)
	}
	if t, err := parseCSVDate(s, p.loc); err == nil {
		return t, nil
	} else if s == "" {
		return time.Time{}, err
	}
	d := strings.NewReplacer("-", "/", ".", "/").Replace(s)
	for _, layout := range []string{"2/1/2006", "2/1/2006 15:04", "2/1/2006 15:04:05", "2/1/06", "2/1/06 15:04", "2/1/06 15:04:05"} {
		if t, err := time.ParseInLocation(layout, d, p.loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date: use DD/MM/YYYY [HH:MM[:SS]] (day first) or YYYY-MM-DD [HH:MM:SS]", trunc(s))
}
