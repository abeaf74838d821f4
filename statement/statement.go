// Package statement parses bank statement files into recon.TransactionInput
// values: CSV files in our own documented layout, the Vietnamese banks'
// Excel (xlsx) and CSV exports as they come (vnheaders.go, xlsx.go;
// docs/statements.md, Bank exports), ISO 20022 camt.053
// (BankToCustomerStatement, message versions camt.053.001.02 through
// camt.053.001.08) and SWIFT MT940. It is an adapter: it imports the domain
// package recon, the standard library and excelize (workbooks) only, and
// knows nothing of storage.
//
// # Common rules
//
// Amounts are whole VND (int64). "150000", "150000.00" and (MT940, CSV)
// "150000,00" are accepted; a non-zero fraction is a row error ("VND has no
// minor unit"), and so is any currency other than VND. A zero amount is a row
// error too: it is no transaction. Credits become AmountIn, debits AmountOut.
//
// TransactionDate is a wall-clock time in Options.Location (default
// Asia/Ho_Chi_Minh): a date without a time is midnight there, a time with a zone
// offset is converted into it, a time without an offset is taken as it is. The
// booking date is used when a statement gives one, else the value date.
//
// Content has its runs of white space (line breaks included) folded into one
// space. BankAccountID is left 0: the caller sets it.
//
// Line.Row is the 1-based line number in the file where a row or entry starts:
// a CSV record (the header is line 1, so the first data row is normally 2; it
// is also the spreadsheet row number unless a quoted cell spans lines), the
// line of a camt.053 <Ntry> start tag, the line of an MT940 :61: tag.
//
// # CSV
//
// A header row is required. Column names are case-insensitive, surrounding
// spaces are ignored and a space or hyphen counts as an underscore
// ("Transaction Date" = transaction_date); the order is free. The separator is
// a comma, a semicolon or a tab, whichever the header row holds most of. The
// file is UTF-8, with or without a byte-order mark.
//
//	transaction_date    required  YYYY-MM-DD HH:MM:SS, YYYY-MM-DD HH:MM, YYYY-MM-DD,
//	                              YYYY-MM-DDTHH:MM:SS (an offset like +07:00 or Z is
//	                              converted), DD/MM/YYYY, DD/MM/YYYY HH:MM[:SS]
//	                              (day first, always; one-digit day and month allowed)
//	amount_in           \ at least one of these two, or `amount` instead of both;
//	amount_out          / an empty cell is 0; exactly one of them must be non-zero
//	amount              a signed amount: positive is money in, negative money out
//	transaction_content required column (the cell may be empty): the transfer memo
//	reference_number    required, non-empty: the bank's reference, the idempotency key
//	accumulated         optional: the balance after the row (may be negative); empty = unknown
//	sub_account         optional: the virtual account the transfer was sent to
//
// A column of any other name is an error that names it and lists the known
// ones, and so is a repeated column. Rows whose cells are all empty are skipped.
// CSV amounts may group thousands with "." or "," (both usual in Vietnam):
// "1.500.000" and "1,500,000" are 1500000. VND is never written with three
// decimals, so a separator followed by exactly three digits groups thousands
// ("150.000" is 150000, not 150); with two, one or four and more digits it is
// a decimal point and the fraction must be zeros ("150000.00", "150000,00").
// When both "." and "," occur, the last one is the decimal point
// ("1.500.000,00"). A sign is allowed in amount and accumulated only.
//
// # camt.053
//
// Entries (Ntry) whose status (Sts, or Sts/Cd from version 08 on) is not BOOK
// are left out: they are not on the booked balance. A Ntry is one transaction,
// whatever the number of TxDtls under it (a batch stays one transaction; their
// remittance texts are joined). Field mapping:
//
//	TransactionDate  BookgDt (Dt or DtTm), else ValDt
//	AmountIn/Out     Amt (attribute Ccy must be VND) by CdtDbtInd: CRDT in, DBIT out
//	ReferenceNumber  AcctSvcrRef, else the first TxDtls/Refs/AcctSvcrRef, else the
//	                 first TxDtls/Refs/EndToEndId other than NOTPROVIDED, else a hash
//	Content          every TxDtls/RmtInf/Ustrd and Strd/CdtrRefInf/Ref joined with a
//	                 space, else AddtlNtryInf, else TxDtls/AddtlTxInf
//	Accumulated      running balance from the OPBD (else PRCD) balance
//
// A reversal (RvslInd true) is booked by its own CdtDbtInd: the reversal of a
// debit is a CRDT entry and is money in. Several Stmt in a file are read in
// turn; they must all name the same account.
//
// # MT940
//
// A file holds one or more messages, with or without the SWIFT {1:}{2:}{4:
// ... -} envelope. Tags :20: :25: :28C: :60F:/:60M: :61: :86: :62F:/:62M: are
// read; others (:64:, :65:, ...) are ignored. Field mapping:
//
//	TransactionDate  the entry date (MMDD, year taken from the value date, across a
//	                 new year when nearer) else the value date (YYMMDD, 20YY)
//	AmountIn/Out     C and RD (reversal of a debit) are money in; D and RC (reversal
//	                 of a credit) are money out
//	ReferenceNumber  the bank reference after "//", else the account owner's
//	                 reference before it; NONREF counts as absent; else a hash
//	Content          the :86: lines joined with a space; when :86: is structured
//	                 (NNN?00...), its ?20..?29 and ?60..?63 subfields joined with a
//	                 space; without :86:, the :61: supplementary details
//	Accumulated      running balance from :60F:/:60M:
//
// # Balances
//
// When a camt.053 statement or an MT940 message has an opening balance, each
// entry's Accumulated is the opening balance plus the entries up to and
// including it, in file order, and a closing balance (camt CLBD, MT940
// :62F:/:62M:) must equal the opening balance plus all entries: if not, Parse
// fails naming both numbers, since the file is corrupt or partial. Without an
// opening balance Accumulated is nil. When skipInvalid drops an entry whose
// amount could not be read, the running balance of that statement is unknown
// from there on (Accumulated nil) and the closing check is not made.
//
// # References
//
// ReferenceNumber is the idempotency key of an import. When a camt.053 or
// MT940 entry carries no reference, it is "stmt-" followed by 24 hex digits of
// a SHA-256 over the entry's fields as written in the file (dates, direction,
// amount, currency, texts; not its position), so the same file, or another
// statement that lists the same entry, yields the same reference. The n-th
// identical entry of a file (n ≥ 2) is hashed with its ordinal, so two
// identical transfers on one day stay two transactions.
//
// # Errors
//
// Every error is, or wraps, a *recon.Error with Code recon.EINVALID, except
// an error of the io.Reader itself, which is passed on wrapped (it is not the
// file's fault). A row problem is a *RowError: errors.As(err, &re) with re a
// *recon.Error yields a copy whose Message names the row ("row 7: amount_in:
// ..."), and whose Fields name the column or element. A file-level problem
// (not XML, an unsupported camt version, a balance mismatch, a missing CSV
// column, a statement balance or account in a currency other than VND) is a
// plain *recon.Error and always fails the parse.
//
// Parse holds the whole result in memory. ParseFunc holds none of it: it
// hands each line on as soon as it is read, so that its memory does not grow
// with the file (see docs/benchmarks.md), except by a few dozen bytes per
// camt.053 or MT940 entry without a bank reference (the count of identical
// entries behind their hashed references) and by the longest row, which the
// caller bounds with the file's size (http.MaxBytesReader).
package statement

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"recon"
)

// Format is a statement file format.
type Format string

// The supported formats.
const (
	CSV     Format = "csv"
	CAMT053 Format = "camt053"
	MT940   Format = "mt940"
	// XLSX is an Excel workbook (Office Open XML); its first worksheet is
	// read as a CSV file is (docs/statements.md, Excel).
	XLSX Format = "xlsx"
)

// DefaultTimeZone is the business time zone used when Options.Location is nil.
const DefaultTimeZone = "Asia/Ho_Chi_Minh"

// progressStep is how many bytes are read between two Options.Progress calls.
const progressStep = 256 << 10

// Options tune Parse. The zero value is ready to use.
type Options struct {
	// Location is the business time zone of TransactionDate; nil means
	// Asia/Ho_Chi_Minh (UTC+7 when the zone database is missing).
	Location *time.Location
	// AccountNumber, when set, must match the account a camt.053 (Acct/Id/IBAN
	// or Acct/Id/Othr/Id) or MT940 (:25:) statement names; spaces, hyphens and
	// case are ignored, and an MT940 "BANKCODE/ACCOUNT" matches on the part after
	// the last slash. CSV files name no account.
	AccountNumber string
	// Progress, when set, is called with the number of bytes read so far every
	// 256 KiB and once at the end, from the goroutine that called Parse.
	Progress func(bytesRead int64)
	// Mapping, when set, says which columns of a CSV file or workbook hold
	// what (a bank account's saved mapping): the header row is the first
	// holding every column it names (docs/statements.md, Column mappings).
	Mapping *ColumnMapping
	// TempDir is where a workbook is unpacked ("" is os.TempDir()).
	TempDir string
	// Clock tells Import the business time, which bounds the rows' dates
	// (recon.TransactionInput.Validate); nil means the system clock.
	Clock recon.Clock
	// Balances, when set, is given the balances the file states (camt.053,
	// MT940): Import records them for the balance proof
	// (docs/statements.md, Balance proof).
	Balances *Balances
	// FileName is the file's name, recorded with the import.
	FileName string
}

// Balances are the balances a camt.053 or MT940 file states: the opening
// balance of its first statement (camt OPBD, else PRCD; MT940 :60F:/:60M:)
// and the closing balance of its last (CLBD, :62F:/:62M:) with its date;
// nil (zero) when the statement gave none. Statements counts the file's
// statements (camt Stmt, MT940 messages).
type Balances struct {
	Opening, Closing *int64
	ClosingDate      time.Time
	Statements       int
}

// Line is one transaction read from a statement.
type Line struct {
	// Row is the 1-based line in the file where the row or entry starts.
	Row int
	Tx  recon.TransactionInput
}

// RowError is a problem with one row or entry. Err is a *recon.Error (Code
// recon.EINVALID) whose Message names the column or element but not the row;
// errors.As on a RowError for a *recon.Error yields a copy whose Message starts
// with "row N: ".
type RowError struct {
	Row int
	Err error
}

// Error returns "row N: field: problem".
func (e *RowError) Error() string {
	var re *recon.Error
	if errors.As(e.Err, &re) {
		return fmt.Sprintf("row %d: %s", e.Row, re.Message)
	}
	return fmt.Sprintf("row %d: %v", e.Row, e.Err)
}

// Unwrap returns Err.
func (e *RowError) Unwrap() error { return e.Err }

// As sets a **recon.Error target to a copy of the wrapped *recon.Error whose
// Message names the row, so that recon.ErrorMessage shows where the problem is.
func (e *RowError) As(target any) bool {
	t, ok := target.(**recon.Error)
	if !ok {
		return false
	}
	var inner *recon.Error
	if !errors.As(e.Err, &inner) {
		*t = &recon.Error{Code: recon.EINVALID, Message: e.Error(), Err: e.Err}
		return true
	}
	c := *inner
	c.Message = e.Error()
	*t = &c
	return true
}

// rowErr returns a RowError about one field (a CSV column or an XML element).
func rowErr(row int, field, format string, args ...any) *RowError {
	msg := fmt.Sprintf(format, args...)
	sep := ": "
	if strings.HasSuffix(field, ":") { // an MT940 tag such as ":61:"
		sep = " "
	}
	return &RowError{Row: row, Err: &recon.Error{
		Code:    recon.EINVALID,
		Message: field + sep + msg,
		Fields:  map[string][]string{field: {msg}},
	}}
}

// saying gives e's error its message as data (recon.Say), on e's row.
func (e *RowError) saying(key string, args ...string) *RowError {
	var re *recon.Error
	if errors.As(e.Err, &re) {
		re.Say = &recon.Say{Key: key, Args: args, Row: e.Row}
	}
	return e
}

// fileErr returns a file-level error.
func fileErr(format string, args ...any) *recon.Error {
	return recon.Errorf(recon.EINVALID, format, args...)
}

// Parse reads a whole statement. With skipInvalid false, the first bad row
// returns (nil, nil, *RowError): all or nothing. With skipInvalid true, bad
// rows are left out and each is returned in skipped. A file-level problem (not
// XML, an unsupported camt version, a balance mismatch, a missing CSV column,
// an account other than opts.AccountNumber) is always an error, with no lines.
// An error of r itself is returned wrapped (not as a *recon.Error): it is not
// the file's fault.
func Parse(r io.Reader, f Format, opts Options, skipInvalid bool) (lines []Line, skipped []RowError, err error) {
	err = ParseFunc(r, f, opts, skipInvalid,
		func(l Line) error { lines = append(lines, l); return nil },
		func(e RowError) { skipped = append(skipped, e) })
	if err != nil {
		return nil, nil, err
	}
	return lines, skipped, nil
}

// ParseFunc reads a statement as Parse does, in one streaming pass, and
// keeps nothing: it calls emit with each good line as soon as it is read and
// skip (with skipInvalid) with each bad row. An error emit returns stops the
// parse and is returned as it is. A file-level problem found late (a camt.053
// or MT940 closing balance that does not add up) comes after lines were
// emitted: a caller that must store all or nothing stores them in a
// transaction it commits only when ParseFunc returns nil.
func ParseFunc(r io.Reader, f Format, opts Options, skipInvalid bool, emit func(Line) error, skip func(RowError)) (err error) {
	loc := opts.Location
	if loc == nil {
		loc = defaultLocation()
	}
	p := &parser{
		loc:      loc,
		account:  normAccount(opts.AccountNumber),
		skip:     skipInvalid,
		seen:     make(map[uint64]uint32),
		emit:     emit,
		onSkip:   skip,
		mapping:  opts.Mapping,
		tempDir:  opts.TempDir,
		balances: opts.Balances,
	}
	src := &sourceReader{r: r, fn: opts.Progress, next: progressStep}
	switch f {
	case CSV:
		err = p.parseCSV(src)
	case CAMT053:
		err = p.parseCAMT(src)
	case MT940:
		err = p.parseMT940(src)
	case XLSX:
		err = p.parseXLSX(src)
	default:
		return fileErr("unknown statement format %q: use %s, %s, %s or %s", f, CSV, XLSX, CAMT053, MT940)
	}
	if src.fn != nil {
		src.fn(src.n)
	}
	if src.err != nil {
		// The reader failed, not the file: pass its error on (an
		// *http.MaxBytesError stays visible to errors.As).
		return fmt.Errorf("statement: reading the file: %w", src.err)
	}
	return err
}

// defaultLocation is Asia/Ho_Chi_Minh, or a fixed UTC+7 (Vietnam has had no
// daylight saving since 1975) where the zone database is missing.
func defaultLocation() *time.Location {
	if loc, err := time.LoadLocation(DefaultTimeZone); err == nil {
		return loc
	}
	return time.FixedZone("+07", 7*60*60)
}

// parser holds the state of one Parse call.
type parser struct {
	loc     *time.Location
	account string // normalised Options.AccountNumber, "" when not set
	skip    bool

	emit   func(Line) error
	onSkip func(RowError)
	// stmtAccount is the first account a statement of the file named.
	stmtAccount, stmtAccountRaw string
	// seen counts hashed entries, for the ordinal of identical ones, by
	// the first 8 bytes of their hash (a million rows without a reference
	// kept 95 MiB of full hashes live, now about 36). Two different
	// entries sharing 8 bytes (about one chance in 10^7 in the largest
	// file) only number the second "#2": still the same on every import of
	// the file.
	seen map[uint64]uint32
	// xml bounds a camt.053 file as it is read.
	xml *xmlLimiter
	// mapping is Options.Mapping; serialDates is true in a workbook, whose
	// date cells hold serial day numbers; tempDir is Options.TempDir.
	mapping     *ColumnMapping
	serialDates bool
	tempDir     string
	// balances is Options.Balances.
	balances *Balances
}

// stmtBalances records the balances of a statement of the file in
// Options.Balances: the first statement's opening, the last one's closing.
func (p *parser) stmtBalances(opening, closing *int64, closingDate time.Time) {
	b := p.balances
	if b == nil {
		return
	}
	if b.Statements == 0 {
		b.Opening = opening
	}
	b.Statements++
	b.Closing, b.ClosingDate = closing, closingDate
}

// add hands a good line on.
func (p *parser) add(row int, tx recon.TransactionInput) error {
	return p.emit(Line{Row: row, Tx: tx})
}

// bad records a bad row; it returns the error to stop with when rows are not
// skipped, nil when they are.
func (p *parser) bad(e *RowError) error {
	if !p.skip {
		return e
	}
	if p.onSkip != nil {
		p.onSkip(*e)
	}
	return nil
}

// checkAccount checks the account a statement names against Options and
// against the other statements of the file.
func (p *parser) checkAccount(raw string) error {
	n := normAccount(raw)
	if n == "" {
		return nil
	}
	if p.account != "" && !accountMatches(n, p.account) {
		return fileErr("statement is for account %s, not %s", strings.TrimSpace(raw), p.account).Saying("st_other_account", strings.TrimSpace(raw), p.account)
	}
	if p.stmtAccount == "" {
		p.stmtAccount, p.stmtAccountRaw = n, strings.TrimSpace(raw)
		return nil
	}
	if n != p.stmtAccount {
		return fileErr("file holds statements of two accounts, %s and %s: import one account per file", p.stmtAccountRaw, strings.TrimSpace(raw)).
			Saying("st_two_accounts", p.stmtAccountRaw, strings.TrimSpace(raw))
	}
	return nil
}

// normAccount upper-cases an account number and drops spaces and hyphens.
func normAccount(s string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == ' ' || r == '-' || r == '\t':
		case 'a' <= r && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// accountMatches reports whether the account a statement names (normalised)
// is want: equal, or equal after the last "/" (MT940 BANKCODE/ACCOUNT), or
// equal without a trailing currency code VND.
func accountMatches(got, want string) bool {
	if got == want {
		return true
	}
	if i := strings.LastIndexByte(got, '/'); i >= 0 && got[i+1:] == want {
		return true
	}
	return strings.TrimSuffix(got[strings.LastIndexByte(got, '/')+1:], "VND") == want
}

// hashRef returns the deterministic reference of an entry without one: fields
// are the entry as written in the file. The n-th identical entry of the file
// (n ≥ 2) is hashed with its ordinal.
func (p *parser) hashRef(fields ...string) string {
	h := sha256.New()
	for _, f := range fields {
		h.Write([]byte(f))
		h.Write([]byte{0x1f})
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	short := binary.BigEndian.Uint64(key[:8])
	p.seen[short]++
	if n := p.seen[short]; n > 1 {
		h.Write([]byte("#" + strconv.Itoa(int(n))))
		h.Sum(key[:0])
	}
	return "stmt-" + hex.EncodeToString(key[:12])
}

// content folds runs of white space into one space and checks the text is UTF-8.
func content(row int, field, s string) (string, *RowError) {
	if !utf8.ValidString(s) {
		return "", rowErr(row, field, "text is not valid UTF-8 (save the file as UTF-8)")
	}
	return strings.Join(strings.Fields(s), " "), nil
}

// ledger is the running balance of one statement (a camt Stmt or an MT940
// message).
type ledger struct {
	opening    int64
	hasOpening bool
	balance    int64 // running balance, valid while known
	known      bool  // the running balance is known
	sum        int64 // sum of the entries, valid while sumKnown
	sumKnown   bool
}

func newLedger(opening *int64) ledger {
	l := ledger{sumKnown: true}
	if opening != nil {
		l.opening, l.hasOpening, l.balance, l.known = *opening, true, *opening, true
	}
	return l
}

// apply adds an entry: delta is in minus out, ok false when the amount could
// not be read. It returns the balance after the entry, nil when unknown.
func (l *ledger) apply(delta int64, ok bool) (*int64, error) {
	if !ok {
		l.known, l.sumKnown = false, false
		return nil, nil
	}
	if l.sumKnown {
		s, err := addAmounts(l.sum, delta)
		if err != nil {
			return nil, err
		}
		l.sum = s
	}
	if !l.known {
		return nil, nil
	}
	b, err := addAmounts(l.balance, delta)
	if err != nil {
		return nil, err
	}
	l.balance = b
	return &b, nil
}

// close checks the closing balance, when the statement has one and the
// opening balance and every entry are known.
func (l *ledger) close(closing *int64, where string) error {
	if closing == nil || !l.hasOpening || !l.sumKnown {
		return nil
	}
	want, err := addAmounts(l.opening, l.sum)
	if err != nil {
		return err
	}
	if want != *closing {
		return fileErr("%s: closing balance %d does not equal opening balance %d plus the entries (%+d) = %d: the file is corrupt or partial",
			where, *closing, l.opening, l.sum, want)
	}
	return nil
}

func addAmounts(a, b int64) (int64, error) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, fileErr("balance overflows")
	}
	return s, nil
}

// MaxLineBytes is the longest line a CSV or MT940 file may hold, and the
// longest CSV row (a quoted cell may hold line breaks). A row's longest
// field, the memo, is at most 2,000 bytes; without a cap a file of one
// endless line would be held whole in memory by the parser.
const MaxLineBytes = 64 << 10

// csvLimiter fails a read once a CSV row (the bytes since the last line
// break outside a quoted cell) grows past max, so that the memory of the
// parse stays bounded: a cell quoted with endless line breaks inside is one
// row to encoding/csv, held whole. It follows encoding/csv's quoting (a
// quote opens a quoted cell only at the start of a cell; "" inside one is
// a quote), so that it stays in step after a row that reader refuses.
type csvLimiter struct {
	r     io.Reader
	max   int
	comma byte

	size         int  // bytes of the current row
	row, start   int  // lines read before this byte; the row's first line - 1
	cellStart    bool // the next byte starts a cell
	quoted, quot bool // in a quoted cell; a quote was just read in it
}

func newCSVLimiter(r io.Reader, max int, comma rune) *csvLimiter {
	return &csvLimiter{r: r, max: max, comma: byte(comma), cellStart: true}
}

func (l *csvLimiter) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	for _, c := range b[:n] {
		if l.quoted {
			switch {
			case l.quot && c == '"': // "" is a quote
				l.quot = false
			case c == '"':
				l.quot = true
			case l.quot: // the closing quote was the last one
				l.quoted, l.quot = false, false
			}
		}
		if !l.quoted {
			switch {
			case c == '\n':
				l.size, l.cellStart = 0, true
				l.row++
				l.start = l.row
				continue
			case c == l.comma:
				l.cellStart = true
			case c == '"' && l.cellStart:
				l.quoted, l.cellStart = true, false
			default:
				l.cellStart = false
			}
		} else if c == '\n' {
			l.row++
		}
		if l.size++; l.size > l.max {
			if l.start != l.row {
				return 0, fileErr("the row starting at line %d (a quoted cell spanning lines) is longer than %d bytes: this is not a statement file", l.start+1, l.max)
			}
			return 0, fileErr("line %d is longer than %d bytes: this is not a statement file", l.row+1, l.max)
		}
	}
	return n, err
}

// sourceReader counts the bytes read, reports progress to fn when set, and
// remembers an error of the underlying reader, to tell it from a bad file.
type sourceReader struct {
	r    io.Reader
	fn   func(int64)
	n    int64
	next int64
	err  error
}

func (s *sourceReader) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	s.n += int64(n)
	if s.fn != nil && s.n >= s.next {
		s.fn(s.n)
		s.next = s.n + progressStep
	}
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// DetectFormat tells the format of a statement file from its name and its
// first bytes (a few KiB are plenty). Content decides: XML whose namespace is
// camt.053 is CAMT053; text starting with ":20:" or a SWIFT "{1:" block is
// MT940; other UTF-8 text is CSV. The name's extension only sharpens the
// error when the content fits no format (an .xml file that is not camt.053,
// an .xlsx workbook, a UTF-16 text).
func DetectFormat(name string, head []byte) (Format, error) {
	ext := strings.ToLower(name)
	if name == "" {
		name = "the file"
	}
	if i := strings.LastIndexByte(ext, '.'); i >= 0 {
		ext = ext[i+1:]
	} else {
		ext = ""
	}
	switch {
	case len(head) == 0:
		return "", fileErr("%s is empty", name).Saying("st_empty")
	case hasPrefix(head, "\xff\xfe"), hasPrefix(head, "\xfe\xff"):
		return "", fileErr("%s is UTF-16 text: save it as UTF-8 (CSV UTF-8)", name).Saying("st_utf16")
	case hasPrefix(head, "PK\x03\x04"):
		if ext == "xlsx" || ext == "xlsm" || strings.Contains(string(head), "[Content_Types].xml") || strings.Contains(string(head), "xl/") {
			return XLSX, nil
		}
		return "", fileErr("%s is a zip archive, not an Excel workbook (.xlsx) nor a statement", name)
	case hasPrefix(head, "\xd0\xcf\x11\xe0"):
		return "", fileErr("%s is an old Excel workbook (.xls): save it as Excel Workbook (.xlsx) or CSV UTF-8", name)
	}
	s := strings.TrimLeft(strings.TrimPrefix(string(head), bom), " \t\r\n")
	switch {
	case strings.HasPrefix(s, "<"):
		if ns := isoNamespace(s); ns != "" {
			if strings.HasPrefix(ns, "camt.053.") {
				return CAMT053, nil
			}
			return "", fileErr("%s is an ISO 20022 %s message: only camt.053 bank statements are supported", name, ns)
		}
		return "", fileErr("%s is XML but not an ISO 20022 camt.053 statement (no urn:iso:std:iso:20022:tech:xsd:camt.053 namespace)", name)
	case strings.HasPrefix(s, ":20:"), strings.HasPrefix(s, "{1:"):
		return MT940, nil
	}
	switch ext {
	case "xml":
		return "", fileErr("%s is not XML", name)
	case "sta", "mt940", "940", "swi":
		return "", fileErr("%s is not an MT940 statement: it does not start with :20: or {1:", name)
	}
	for i := 0; i < len(head); i++ {
		if head[i] == 0 {
			return "", fileErr("%s is not a text file", name)
		}
	}
	return CSV, nil
}

// isoNamespace returns the message name of the first ISO 20022 namespace in s
// ("camt.053.001.08"), or "".
func isoNamespace(s string) string {
	const prefix = "urn:iso:std:iso:20022:tech:xsd:"
	i := strings.Index(s, prefix)
	if i < 0 {
		return ""
	}
	s = s[i+len(prefix):]
	end := strings.IndexAny(s, "\"' \t\r\n>")
	if end < 0 {
		end = len(s)
	}
	return s[:end]
}

const bom = "\ufeff"

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

// newBufReader returns r as a *bufio.Reader, without the UTF-8 byte-order mark.
func newBufReader(r io.Reader) *bufio.Reader {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, err := br.Peek(3); err == nil && string(b) == bom {
		_, _ = br.Discard(3)
	}
	return br
}
