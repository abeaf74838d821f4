package statement

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"recon"
)

// MaxMT940FieldBytes is the largest MT940 field, its lines and line breaks
// together: twenty times the standard's largest (:86:, 6 lines of 65
// characters), for banks that write longer ones. Reading stops within the
// first buffer past it, so a field of endless continuation lines is refused
// before it is held (docs/statements.md, Limits).
const MaxMT940FieldBytes = 8 << 10

// mtField is one MT940 field: its tag ("61"), its first line's text after the
// tag, and its continuation lines.
type mtField struct {
	tag  string
	row  int
	text []string // the first line's text, then each continuation line
	size int      // bytes read of the field, line breaks included
}

// mtMessage is the state of the MT940 message being read.
type mtMessage struct {
	ref              string // :20:
	opening, closing *int64
	closingDate      time.Time // of :62F:/:62M:
	led              ledger
	started          bool
	entry, info      *mtField // the :61: waiting for its :86:, and that :86:
}

func (m *mtMessage) where() string { return "statement :20:" + m.ref }

func (p *parser) parseMT940(r io.Reader) error {
	var msg *mtMessage
	err := mtFields(newBufReader(r), func(f *mtField) error {
		if msg == nil && f.tag != "20" {
			return fileErr("line %d: an MT940 message starts with :20:, not :%s:", f.row, f.tag)
		}
		switch f.tag {
		case "20":
			if err := p.mtClose(msg); err != nil {
				return err
			}
			msg = &mtMessage{ref: strings.TrimSpace(f.text[0])}
		case "25":
			if err := p.checkAccount(f.text[0]); err != nil {
				return err
			}
		case "60F", "60M", "62F", "62M":
			if err := p.mtFlush(msg); err != nil {
				return err
			}
			v, err := mtBalance(f.text[0])
			if err != nil {
				return fileErr("%s: line %d: :%s: %v", msg.where(), f.row, f.tag, err)
			}
			if f.tag[:2] == "60" {
				msg.opening = &v
			} else {
				msg.closing = &v
				msg.closingDate, _ = yymmdd(strings.TrimSpace(f.text[0])[1:7])
			}
		case "61":
			if err := p.mtFlush(msg); err != nil {
				return err
			}
			msg.entry = f
		case "86":
			if msg.entry != nil && msg.info == nil {
				msg.info = f
			} // else information about the whole statement: not read
		default: // :28C:, :64:, :65:, ...: not read
			if err := p.mtFlush(msg); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if msg == nil {
		return fileErr("no :20: field: the file is not an MT940 statement")
	}
	return p.mtClose(msg)
}

// mtFields splits a file into fields, dropping SWIFT envelopes ({1:}{2:}{3:}
// {4: ... -}{5:}) and message separators ("-"), and hands each to fn once it
// is complete (the next field starts or the file ends): one field at a time
// is held, whatever the size of the file.
func mtFields(br *bufio.Reader, fn func(*mtField) error) error {
	var last *mtField
	started := false
	flush := func() error {
		if last == nil {
			return nil
		}
		f := last
		last = nil
		return fn(f)
	}
	for row := 1; ; row++ {
		// The line's cap: a field's line may take what the field has left,
		// another line MaxLineBytes.
		limit, tag := MaxLineBytes, ""
		switch head, _ := br.Peek(5); {
		case len(head) >= 4 && head[0] == ':' && mtTag(string(head[1:])) > 0:
			limit, tag = MaxMT940FieldBytes, string(head[1:1+mtTag(string(head[1:]))])
		case len(head) > 0 && (head[0] == '{' || head[0] == '-'): // SWIFT blocks, the message's end
		case last != nil:
			limit, tag = MaxMT940FieldBytes-last.size, last.tag
		}
		line, tooLong, err := readLine(br, limit)
		if err != nil && err != io.EOF {
			return err
		}
		if tooLong {
			if tag == "" {
				return fileErr("line %d is longer than %d bytes: this is not a statement file", row, MaxLineBytes)
			}
			start := row
			if last != nil && last.tag == tag && limit < MaxMT940FieldBytes {
				start = last.row
			}
			if start != row {
				return fileErr("line %d: field :%s: (from line %d) is longer than %d bytes: this is not an MT940 statement", row, tag, start, MaxMT940FieldBytes)
			}
			return fileErr("line %d: field :%s: is longer than %d bytes: this is not an MT940 statement", row, tag, MaxMT940FieldBytes)
		}
		size := len(line)
		if line == "" && err == io.EOF {
			return flush()
		}
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "{") {
			_, rest, ok := strings.Cut(line, "{4:")
			if !ok {
				continue // a header block line
			}
			line = rest
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "-" || strings.HasPrefix(trimmed, "-}"):
			continue
		case len(line) >= 4 && line[0] == ':' && mtTag(line[1:]) > 0:
			if err := flush(); err != nil {
				return err
			}
			n := mtTag(line[1:])
			last, started = &mtField{tag: line[1 : 1+n], row: row, text: []string{line[2+n:]}, size: size}, true
		case trimmed == "":
		case !started:
			return fileErr("line %d: not MT940: expected :20: first", row)
		default:
			last.text = append(last.text, line)
			if last.size += size; last.size > MaxMT940FieldBytes { // a line starting with '-'
				return fileErr("line %d: field :%s: (from line %d) is longer than %d bytes: this is not an MT940 statement", row, last.tag, last.row, MaxMT940FieldBytes)
			}
		}
		if err == io.EOF {
			return flush()
		}
	}
}

// readLine reads a line, its '\n' included, or reports tooLong as soon as
// it holds more than limit bytes (having read at most one buffer more).
func readLine(br *bufio.Reader, limit int) (line string, tooLong bool, err error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > limit {
			return "", true, nil
		}
		buf = append(buf, frag...)
		if err != bufio.ErrBufferFull {
			return string(buf), false, err
		}
	}
}

// mtTag returns the length of the tag at the start of s ("61:", "60F:") when s
// starts with one, else 0.
func mtTag(s string) int {
	if len(s) < 3 || !isDigit(s[0]) || !isDigit(s[1]) {
		return 0
	}
	if s[2] == ':' {
		return 2
	}
	if len(s) >= 4 && 'A' <= s[2] && s[2] <= 'Z' && s[3] == ':' {
		return 3
	}
	return 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// mtBalance parses a :60F:/:62F: balance: D/C mark, YYMMDD, currency, amount.
func mtBalance(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if len(s) < 11 || (s[0] != 'C' && s[0] != 'D') || !allDigits(s[1:7]) {
		return 0, fmt.Errorf("%q is not a balance (C or D, YYMMDD, currency, amount)", s)
	}
	if err := checkCurrency(s[7:10]); err != nil {
		return 0, err
	}
	v, err := parseDecimal(s[10:], ',')
	if err != nil {
		return 0, err
	}
	if s[0] == 'D' {
		v = -v
	}
	return v, nil
}

// mtClose finishes a message: its last entry, then the closing balance check.
func (p *parser) mtClose(msg *mtMessage) error {
	if msg == nil {
		return nil
	}
	if err := p.mtFlush(msg); err != nil {
		return err
	}
	if !msg.started {
		msg.led = newLedger(msg.opening)
	}
	p.stmtBalances(msg.opening, msg.closing, msg.closingDate)
	return msg.led.close(msg.closing, msg.where())
}

// mtFlush reads the waiting :61: (and its :86:) into a line.
func (p *parser) mtFlush(msg *mtMessage) error {
	f, info := msg.entry, msg.info
	if f == nil {
		return nil
	}
	msg.entry, msg.info = nil, nil
	if !msg.started {
		msg.led, msg.started = newLedger(msg.opening), true
	}
	e, perr := parse61(f.text[0])
	var tx recon.TransactionInput
	if e.in {
		tx.AmountIn = e.amount
	} else {
		tx.AmountOut = e.amount
	}
	acc, err := msg.led.apply(tx.AmountIn-tx.AmountOut, e.amountOK)
	if err != nil {
		return err
	}
	if perr != nil {
		return p.bad(rowErr(f.row, ":61:", "%v", perr))
	}
	if e.amount == 0 {
		return p.bad(rowErr(f.row, ":61:", "the amount is zero"))
	}
	tx.Accumulated = acc
	tx.TransactionDate = time.Date(e.date.Year(), e.date.Month(), e.date.Day(), 0, 0, 0, 0, p.loc)

	var text, field string
	switch {
	case info != nil:
		text, field = mtInfo(info.text), ":86:"
	case len(f.text) > 1:
		text, field = f.text[1], ":61:"
	}
	var rerr *RowError
	if tx.Content, rerr = content(f.row, field, text); rerr != nil {
		return p.bad(rerr)
	}

	ref := e.bankRef
	if mtNoRef(ref) {
		ref = e.custRef
	}
	if mtNoRef(ref) {
		raw := []string{string(MT940), strings.Join(f.text, "\n")}
		if info != nil {
			raw = append(raw, strings.Join(info.text, "\n"))
		}
		ref = p.hashRef(raw...)
	}
	if tx.ReferenceNumber, rerr = content(f.row, ":61:", ref); rerr != nil {
		return p.bad(rerr)
	}
	refs := []string{e.custRef, e.bankRef}
	if info != nil {
		refs = append(refs, mtInfoRefs(info.text)...)
	}
	tx.References = recon.CleanReferences(tx.ReferenceNumber, usableRefs(refs))
	return p.add(f.row, tx)
}

func mtNoRef(s string) bool { return s == "" || strings.EqualFold(s, "NONREF") }

// mt61 is a parsed :61: statement line.
type mt61 struct {
	date     time.Time // entry date, else value date (UTC midnight)
	in       bool      // money in: C or RD
	amount   int64
	amountOK bool // the amount and direction were read, even if a later subfield is bad
	custRef  string
	bankRef  string
}

// parse61 parses the first line of a :61: field:
// YYMMDD[MMDD](C|D|RC|RD)[funds code]amount(N|F|S)xxx reference[//bank reference].
func parse61(s string) (mt61, error) {
	var e mt61
	if len(s) < 6 || !allDigits(s[:6]) {
		return e, fmt.Errorf("%q does not start with a value date (YYMMDD)", trunc(s))
	}
	value, ok := yymmdd(s[:6])
	if !ok {
		return e, fmt.Errorf("value date %q is not a date (YYMMDD)", s[:6])
	}
	i := 6
	e.date = value
	var entryMMDD string
	if len(s) >= 10 && allDigits(s[6:10]) {
		entryMMDD, i = s[6:10], 10
	}
	// Debit/credit mark.
	mark := ""
	switch {
	case strings.HasPrefix(s[i:], "RC"), strings.HasPrefix(s[i:], "RD"):
		mark = s[i : i+2]
	case strings.HasPrefix(s[i:], "C"), strings.HasPrefix(s[i:], "D"):
		mark = s[i : i+1]
	default:
		return e, fmt.Errorf("%q: the debit/credit mark must be C, D, RC or RD", trunc(s))
	}
	i += len(mark)
	e.in = mark == "C" || mark == "RD"
	if i < len(s) && 'A' <= s[i] && s[i] <= 'Z' {
		i++ // funds code
	}
	j := i
	for j < len(s) && (isDigit(s[j]) || s[j] == ',') {
		j++
	}
	if j == i || !isDigit(s[i]) {
		return e, fmt.Errorf("%q: no amount after the debit/credit mark", trunc(s))
	}
	amount, err := parseDecimal(s[i:j], ',')
	if err != nil {
		return e, fmt.Errorf("amount %w", err)
	}
	e.amount, e.amountOK = amount, true
	if j+4 > len(s) || !strings.ContainsRune("NFS", rune(s[j])) {
		return e, fmt.Errorf("%q: no transaction type code (N..., F... or S...) after the amount", trunc(s))
	}
	refs := strings.TrimSpace(s[j+4:])
	cust, bank, _ := strings.Cut(refs, "//")
	e.custRef, e.bankRef = strings.TrimSpace(cust), strings.TrimSpace(bank)
	if entryMMDD != "" {
		d, ok := nearestDate(value, entryMMDD)
		if !ok {
			return e, fmt.Errorf("entry date %q is not a date (MMDD)", entryMMDD)
		}
		e.date = d
	}
	return e, nil
}

// yymmdd parses an MT940 date; the century is 2000.
func yymmdd(s string) (time.Time, bool) {
	y := 2000 + int(s[0]-'0')*10 + int(s[1]-'0')
	return date(y, int(s[2]-'0')*10+int(s[3]-'0'), int(s[4]-'0')*10+int(s[5]-'0'))
}

// nearestDate returns the date of mmdd nearest to ref: in ref's year, or the
// year before or after (an entry booked on 2 January for a value date of 31
// December).
func nearestDate(ref time.Time, mmdd string) (time.Time, bool) {
	m, d := int(mmdd[0]-'0')*10+int(mmdd[1]-'0'), int(mmdd[2]-'0')*10+int(mmdd[3]-'0')
	var best time.Time
	found := false
	for y := ref.Year() - 1; y <= ref.Year()+1; y++ {
		t, ok := date(y, m, d)
		if ok && (!found || absDuration(t.Sub(ref)) < absDuration(best.Sub(ref))) {
			best, found = t, true
		}
	}
	return best, found
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// date returns the UTC midnight of y-m-d, false when that is no date.
func date(y, m, d int) (time.Time, bool) {
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	return t, t.Year() == y && int(t.Month()) == m && t.Day() == d
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// mtInfo returns the text of a :86: field. Structured information (three
// digits, then ?00, ?10, ... subfields) yields its ?20..?29 and ?60..?63
// remittance subfields joined with a space; free text yields its lines joined
// with a space.
// mtInfoRefs are the references a :86: field names in its structured
// forms (docs/statements.md, References): the SEPA keywords EREF+ (end-to-end
// id), KREF+ (customer reference) and MREF+ (mandate) of the German
// subfields (?20-?29), and the SWIFT-style codes /EREF/, /PREF/, /KREF/,
// /ROC/ of the Dutch and Nordic banks.
func mtInfoRefs(lines []string) []string {
	joined := strings.Join(lines, "")
	var refs []string
	// German subfields: ?20EREF+ABC?21... ; the value runs to the next '?'.
	for _, key := range []string{"EREF+", "KREF+", "MREF+"} {
		for rest := joined; ; {
			i := strings.Index(rest, key)
			if i < 0 {
				break
			}
			rest = rest[i+len(key):]
			v, _, _ := strings.Cut(rest, "?")
			refs = append(refs, strings.TrimSpace(v))
		}
	}
	// SWIFT-style: /EREF/ABC/ ; the value runs to the next '/'.
	for _, key := range []string{"/EREF/", "/PREF/", "/KREF/", "/ROC/"} {
		for rest := joined; ; {
			i := strings.Index(rest, key)
			if i < 0 {
				break
			}
			rest = rest[i+len(key):]
			v, _, _ := strings.Cut(rest, "/")
			refs = append(refs, strings.TrimSpace(v))
		}
	}
	return refs
}

func mtInfo(lines []string) string {
	joined := strings.Join(lines, "")
	if len(joined) >= 4 && allDigits(joined[:3]) && joined[3] == '?' {
		var parts []string
		for _, sub := range strings.Split(joined[3:], "?") {
			if len(sub) < 2 || !allDigits(sub[:2]) {
				continue
			}
			if c := sub[:2]; ("20" <= c && c <= "29") || ("60" <= c && c <= "63") {
				parts = append(parts, strings.TrimSpace(sub[2:]))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " ")
		}
	}
	return strings.Join(lines, " ")
}
