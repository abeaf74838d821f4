package statement

import (
	"time"

	"encoding/xml"
	"errors"
	"io"
	"strings"

	"recon"
)

// isoPrefix starts every ISO 20022 message namespace.
const isoPrefix = "urn:iso:std:iso:20022:tech:xsd:"

// The camt.053 elements read; struct tags carry no namespace, so they match
// every supported version. Elements not listed are skipped.

type camtAmt struct {
	Ccy   string `xml:"Ccy,attr"`
	Value string `xml:",chardata"`
}

// camtDate is a DateAndDateTimeChoice: Dt or DtTm.
type camtDate struct {
	Dt   string `xml:"Dt"`
	DtTm string `xml:"DtTm"`
}

func (d camtDate) value() string {
	if s := strings.TrimSpace(d.DtTm); s != "" {
		return s
	}
	return strings.TrimSpace(d.Dt)
}

// camtStatus is <Sts>BOOK</Sts> (versions 02 to 07) or <Sts><Cd>BOOK</Cd></Sts>
// (version 08).
type camtStatus struct {
	Text string `xml:",chardata"`
	Cd   string `xml:"Cd"`
}

func (s camtStatus) code() string {
	if c := strings.TrimSpace(s.Cd); c != "" {
		return c
	}
	return strings.TrimSpace(s.Text)
}

type camtAcct struct {
	IBAN string `xml:"Id>IBAN"`
	Othr string `xml:"Id>Othr>Id"`
	Ccy  string `xml:"Ccy"`
}

type camtBal struct {
	Code      string   `xml:"Tp>CdOrPrtry>Cd"`
	Amt       camtAmt  `xml:"Amt"`
	CdtDbtInd string   `xml:"CdtDbtInd"`
	Dt        camtDate `xml:"Dt"`
}

type camtTx struct {
	AcctSvcrRef string   `xml:"Refs>AcctSvcrRef"`
	EndToEndID  string   `xml:"Refs>EndToEndId"`
	TxID        string   `xml:"Refs>TxId"`
	InstrID     string   `xml:"Refs>InstrId"`
	Ustrd       []string `xml:"RmtInf>Ustrd"`
	CdtrRef     []string `xml:"RmtInf>Strd>CdtrRefInf>Ref"`
	AddtlTxInf  string   `xml:"AddtlTxInf"`
}

type camtEntry struct {
	Amt          camtAmt    `xml:"Amt"`
	CdtDbtInd    string     `xml:"CdtDbtInd"`
	RvslInd      string     `xml:"RvslInd"`
	Sts          camtStatus `xml:"Sts"`
	BookgDt      camtDate   `xml:"BookgDt"`
	ValDt        camtDate   `xml:"ValDt"`
	NtryRef      string     `xml:"NtryRef"`
	AcctSvcrRef  string     `xml:"AcctSvcrRef"`
	TxDtls       []camtTx   `xml:"NtryDtls>TxDtls"`
	AddtlNtryInf string     `xml:"AddtlNtryInf"`
}

func (p *parser) parseCAMT(r io.Reader) error {
	p.xml = newXMLLimiter(r)
	d := xml.NewDecoder(newBufReader(p.xml))
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		if strings.EqualFold(label, "US-ASCII") || strings.EqualFold(label, "ASCII") {
			return in, nil // a subset of UTF-8
		}
		return nil, fileErr("the XML declares the encoding %s: only UTF-8 is supported", label)
	}
	// The Document may sit inside an envelope (a business application header
	// wrapper): the first element named Document decides.
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return fileErr("no ISO 20022 Document element: the file is not a camt.053 statement")
		}
		if err != nil {
			return xmlErr(err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "Document" {
			if err := camtNamespace(se.Name.Space); err != nil {
				return err
			}
			return p.camtDocument(d)
		}
	}
}

// camtNamespace checks a Document's namespace is a supported camt.053 version.
func camtNamespace(ns string) error {
	const want = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.02 through camt.053.001.08"
	msg, ok := strings.CutPrefix(ns, isoPrefix)
	switch {
	case ns == "":
		return fileErr("the XML Document has no namespace: expected %s", want)
	case !ok:
		return fileErr("the XML Document's namespace %q is not ISO 20022: expected %s", ns, want)
	case !strings.HasPrefix(msg, "camt.053."):
		return fileErr("%s is not supported: only camt.053 bank statements are (%s)", msg, want)
	}
	ver, ok := strings.CutPrefix(msg, "camt.053.001.")
	if !ok || len(ver) != 2 || ver < "02" || ver > "08" {
		return fileErr("%s is an unsupported camt.053 version: supported are camt.053.001.02 through camt.053.001.08", msg)
	}
	return nil
}

// xmlErr turns a decoder error into a file-level error. An error of the
// underlying reader is caught by Parse before this one is seen.
func xmlErr(err error) error {
	var re *recon.Error
	if errors.As(err, &re) {
		return re
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		if se.Msg == "unexpected EOF" {
			return fileErr("the XML ends too early at line %d: the file is truncated", se.Line)
		}
		return fileErr("malformed XML at line %d: %s", se.Line, se.Msg)
	}
	return fileErr("malformed XML: %v", err)
}

// camtDocument reads the children of Document up to its end.
func (p *parser) camtDocument(d *xml.Decoder) error {
	stmts := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return xmlErr(err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if stmts == 0 {
				return fileErr("the camt.053 Document holds no BkToCstmrStmt/Stmt")
			}
			return nil
		case xml.StartElement:
			if t.Name.Local != "BkToCstmrStmt" {
				if err := d.Skip(); err != nil {
					return xmlErr(err)
				}
				continue
			}
			n, err := p.camtMessage(d)
			if err != nil {
				return err
			}
			stmts += n
		}
	}
}

// camtMessage reads a BkToCstmrStmt and returns the number of Stmt in it.
func (p *parser) camtMessage(d *xml.Decoder) (int, error) {
	n := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return 0, xmlErr(err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return n, nil
		case xml.StartElement:
			if t.Name.Local != "Stmt" {
				if err := d.Skip(); err != nil {
					return 0, xmlErr(err)
				}
				continue
			}
			n++
			if err := p.camtStmt(d); err != nil {
				return 0, err
			}
		}
	}
}

// camtStmt reads one Stmt: its account, balances and entries.
func (p *parser) camtStmt(d *xml.Decoder) error {
	var (
		id               string
		opening, closing *int64
		closingDate      time.Time
		openingCode      string
		led              ledger
		started          bool
	)
	where := func() string {
		if id == "" {
			return "statement"
		}
		return "statement " + id
	}
	for {
		tok, err := d.Token()
		if err != nil {
			return xmlErr(err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if !started {
				led = newLedger(opening)
			}
			p.stmtBalances(opening, closing, closingDate)
			return led.close(closing, where())
		case xml.StartElement:
			switch t.Name.Local {
			case "Id":
				if err := p.decodeWhole(d, &id, &t); err != nil {
					return xmlErr(err)
				}
				id = strings.TrimSpace(id)
			case "Acct":
				var a camtAcct
				if err := p.decodeWhole(d, &a, &t); err != nil {
					return xmlErr(err)
				}
				acct := a.IBAN
				if strings.TrimSpace(acct) == "" {
					acct = a.Othr
				}
				if err := p.checkAccount(acct); err != nil {
					return err
				}
				if c := strings.TrimSpace(a.Ccy); c != "" {
					if err := checkCurrency(c); err != nil {
						return fileErr("%s: account: %v", where(), err)
					}
				}
			case "Bal":
				var b camtBal
				if err := p.decodeWhole(d, &b, &t); err != nil {
					return xmlErr(err)
				}
				code := strings.TrimSpace(b.Code)
				switch {
				case code == "OPBD" && openingCode != "OPBD", code == "PRCD" && openingCode == "":
				case code == "CLBD" && closing == nil:
				default:
					continue
				}
				v, err := camtBalance(b)
				if err != nil {
					return fileErr("%s: %s balance: %v", where(), code, err)
				}
				if code == "CLBD" {
					closing = &v
					closingDate, _ = parseISODateTime(b.Dt.value(), p.loc)
				} else {
					opening, openingCode = &v, code
				}
			case "Ntry":
				if !started {
					led, started = newLedger(opening), true
				}
				row, _ := d.InputPos()
				var e camtEntry
				if err := p.decodeWhole(d, &e, &t); err != nil {
					return xmlErr(err)
				}
				if err := p.camtEntry(row, &e, &led); err != nil {
					return err
				}
			default:
				if err := d.Skip(); err != nil {
					return xmlErr(err)
				}
			}
		}
	}
}

// decodeWhole decodes the element start into v, reading at most
// MaxCAMTElementBytes of it.
func (p *parser) decodeWhole(d *xml.Decoder, v any, start *xml.StartElement) error {
	line, _ := d.InputPos()
	p.xml.startElement(start.Name.Local, line)
	defer p.xml.endElement()
	return d.DecodeElement(v, start)
}

// camtBalance returns a balance's signed amount.
func camtBalance(b camtBal) (int64, error) {
	if err := checkCurrency(b.Amt.Ccy); err != nil {
		return 0, err
	}
	v, err := parseDecimal(strings.TrimSpace(b.Amt.Value), '.')
	if err != nil {
		return 0, err
	}
	switch strings.TrimSpace(b.CdtDbtInd) {
	case "CRDT":
		return v, nil
	case "DBIT":
		return -v, nil
	}
	return 0, errors.New("CdtDbtInd must be CRDT or DBIT")
}

// camtEntry reads one Ntry into a line, or a skipped row.
func (p *parser) camtEntry(row int, e *camtEntry, led *ledger) error {
	if st := e.Sts.code(); st != "" && st != "BOOK" {
		return nil // pending or information only: not on the booked balance
	}
	var tx recon.TransactionInput
	amount, aerr := camtAmount(row, e)
	if aerr == nil {
		if strings.TrimSpace(e.CdtDbtInd) == "CRDT" {
			tx.AmountIn = amount
		} else {
			tx.AmountOut = amount
		}
	}
	acc, err := led.apply(tx.AmountIn-tx.AmountOut, aerr == nil)
	if err != nil {
		return err
	}
	if aerr != nil {
		return p.bad(aerr)
	}
	if amount == 0 {
		return p.bad(rowErr(row, "Amt", "is zero"))
	}
	tx.Accumulated = acc

	date, field := e.BookgDt.value(), "BookgDt"
	if date == "" {
		date, field = e.ValDt.value(), "ValDt"
	}
	if date == "" {
		return p.bad(rowErr(row, "BookgDt", "missing: the entry has neither BookgDt nor ValDt"))
	}
	t, derr := parseISODateTime(date, p.loc)
	if derr != nil {
		return p.bad(rowErr(row, field, "%v", derr))
	}
	tx.TransactionDate = t

	var texts []string
	for _, d := range e.TxDtls {
		texts = append(texts, d.Ustrd...)
		texts = append(texts, d.CdtrRef...)
	}
	text := strings.Join(texts, " ")
	if strings.TrimSpace(text) == "" {
		text = e.AddtlNtryInf
	}
	for i := 0; strings.TrimSpace(text) == "" && i < len(e.TxDtls); i++ {
		text = e.TxDtls[i].AddtlTxInf
	}
	if tx.Content, aerr = content(row, "RmtInf", text); aerr != nil {
		return p.bad(aerr)
	}

	tx.ReferenceNumber = camtReference(e)
	if tx.ReferenceNumber == "" {
		fields := []string{string(CAMT053), e.BookgDt.Dt, e.BookgDt.DtTm, e.ValDt.Dt, e.ValDt.DtTm,
			e.CdtDbtInd, e.RvslInd, e.Amt.Value, e.Amt.Ccy, e.AddtlNtryInf}
		for _, d := range e.TxDtls {
			fields = append(fields, strings.Join(d.Ustrd, "\n"), strings.Join(d.CdtrRef, "\n"), d.AddtlTxInf)
		}
		tx.ReferenceNumber = p.hashRef(fields...)
	}
	tx.References = recon.CleanReferences(tx.ReferenceNumber, camtReferences(e))
	return p.add(row, tx)
}

// camtReferences are every reference an entry carries (docs/statements.md,
// References): its NtryRef and AcctSvcrRef, and each TxDtls' AcctSvcrRef,
// EndToEndId, TxId and InstrId; NOTPROVIDED counts as absent.
func camtReferences(e *camtEntry) []string {
	refs := []string{e.NtryRef, e.AcctSvcrRef}
	for _, d := range e.TxDtls {
		refs = append(refs, d.AcctSvcrRef, d.EndToEndID, d.TxID, d.InstrID)
	}
	return usableRefs(refs)
}

// usableRefs keeps the references fit to store as other references: not
// empty, not a word for none (NOTPROVIDED, NONREF), at most 128 bytes of
// text (a longer or unprintable one is left out, the row is not refused for
// it), at most recon.MaxOtherReferences of them.
func usableRefs(refs []string) []string {
	var out []string
	for _, r := range refs {
		r = strings.TrimSpace(r)
		if r == "" || strings.EqualFold(r, "NOTPROVIDED") || strings.EqualFold(r, "NONREF") || len(r) > 128 ||
			recon.BadText(r, false) != "" || len(out) == recon.MaxOtherReferences {
			continue
		}
		out = append(out, r)
	}
	return out
}

// camtAmount checks an entry's currency, amount and direction.
func camtAmount(row int, e *camtEntry) (int64, *RowError) {
	if err := checkCurrency(e.Amt.Ccy); err != nil {
		return 0, rowErr(row, "Amt", "%v", err)
	}
	v, err := parseDecimal(strings.TrimSpace(e.Amt.Value), '.')
	if err != nil {
		return 0, rowErr(row, "Amt", "%v", err)
	}
	if c := strings.TrimSpace(e.CdtDbtInd); c != "CRDT" && c != "DBIT" {
		return 0, rowErr(row, "CdtDbtInd", "%q: must be CRDT or DBIT", c)
	}
	return v, nil
}

// camtReference is the bank's reference of an entry, "" when it has none.
func camtReference(e *camtEntry) string {
	if s := strings.TrimSpace(e.AcctSvcrRef); s != "" {
		return s
	}
	for _, d := range e.TxDtls {
		if s := strings.TrimSpace(d.AcctSvcrRef); s != "" {
			return s
		}
	}
	for _, d := range e.TxDtls {
		if s := strings.TrimSpace(d.EndToEndID); s != "" && !strings.EqualFold(s, "NOTPROVIDED") {
			return s
		}
	}
	return ""
}

// Bounds of a camt.053 file, checked while it is read (docs/statements.md,
// Limits): encoding/xml holds a text node, a tag with its attributes, a
// comment, a CDATA section or a processing instruction whole, and keeps a
// frame per open element, so without them one endless node or an endless
// nesting would be held in memory whatever the cap on the file's size.
const (
	// MaxXMLTokenBytes is the largest text node, tag, comment, CDATA
	// section, processing instruction or declaration.
	MaxXMLTokenBytes = 64 << 10
	// MaxXMLDepth is the deepest nesting of elements (a camt.053 statement
	// needs about 12, an envelope a few more).
	MaxXMLDepth = 100
	// MaxCAMTElementBytes is the largest element read whole: an Ntry (with
	// all its TxDtls), an Acct, a Bal or a Stmt's Id.
	MaxCAMTElementBytes = 4 << 20
)

// xmlState is where an xmlLimiter stands in the XML text.
type xmlState uint8

const (
	xText    xmlState = iota
	xOpen             // after '<'
	xTag              // in a start or end tag
	xQuote            // in a quoted attribute value
	xBang             // after "<!": a comment, a CDATA section or a declaration
	xComment          // <!-- ... -->
	xCDATA            // <![CDATA[ ... ]]>
	xPI               // <? ... ?>
	xDecl             // <!DOCTYPE ...>, nested brackets counted
)

var xmlUnit = [...]string{xText: "text", xOpen: "tag", xTag: "tag", xQuote: "tag", xBang: "declaration",
	xComment: "comment", xCDATA: "CDATA section", xPI: "processing instruction", xDecl: "declaration"}

// xmlLimiter follows the XML's lexical structure as it is read and fails the
// read at the first byte past MaxXMLTokenBytes of one token, past
// MaxXMLDepth of nesting, or past the budget of the element being decoded
// whole (startElement), naming the line. It only counts: malformed XML is
// left to the decoder to refuse.
type xmlLimiter struct {
	r                 io.Reader
	state             xmlState
	size, depth, line int
	end, slash        bool // the tag is an end tag; its last byte was '/'
	quote             byte
	bang              []byte // what follows "<!" until it is told apart
	tail              [2]byte
	nest              int // '<' open in a declaration
	budget, spent     int64
	budgetName        string
	budgetLine        int
}

func newXMLLimiter(r io.Reader) *xmlLimiter { return &xmlLimiter{r: r, line: 1} }

// startElement bounds the bytes read from now until endElement to
// MaxCAMTElementBytes (the decoder reads ahead by at most its buffer, so the
// bound is that much approximate).
func (l *xmlLimiter) startElement(name string, line int) {
	l.budget, l.spent, l.budgetName, l.budgetLine = MaxCAMTElementBytes, 0, name, line
}

func (l *xmlLimiter) endElement() { l.budget = 0 }

func (l *xmlLimiter) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	if l.budget > 0 {
		if l.spent += int64(n); l.spent > l.budget {
			return 0, fileErr("line %d: the %s element is longer than %d bytes: this is not a camt.053 statement", l.budgetLine, l.budgetName, l.budget)
		}
	}
	for _, c := range b[:n] {
		if c == '\n' {
			l.line++
		}
		if err := l.step(c); err != nil {
			return 0, err
		}
	}
	return n, err
}

func (l *xmlLimiter) step(c byte) error {
	prev := l.tail
	l.tail = [2]byte{prev[1], c}
	l.size++
	switch l.state {
	case xText:
		if c == '<' {
			l.state, l.size = xOpen, 1
		}
	case xOpen:
		switch c {
		case '/':
			l.state, l.end, l.slash = xTag, true, false
		case '?':
			l.state = xPI
		case '!':
			l.state, l.bang = xBang, l.bang[:0]
		default:
			l.state, l.end, l.slash = xTag, false, false
		}
	case xTag:
		switch c {
		case '"', '\'':
			l.state, l.quote = xQuote, c
		case '>':
			switch {
			case l.end:
				l.depth = max(0, l.depth-1) // never below the start: end tags cannot buy depth
			case !l.slash:
				if l.depth++; l.depth > MaxXMLDepth {
					return fileErr("line %d: XML elements nested deeper than %d: this is not a camt.053 statement", l.line, MaxXMLDepth)
				}
			}
			l.state, l.size = xText, 0
		}
		l.slash = c == '/'
	case xQuote:
		if c == l.quote {
			l.state = xTag
		}
	case xBang:
		l.bang = append(l.bang, c)
		switch b := string(l.bang); {
		case b == "--":
			l.state = xComment
		case b == "[CDATA[":
			l.state = xCDATA
		case strings.HasPrefix("--", b), strings.HasPrefix("[CDATA[", b):
		case c == '>':
			l.state, l.size = xText, 0
		default:
			l.state, l.nest, l.quote = xDecl, 0, 0
			if c == '"' || c == '\'' {
				l.quote = c
			}
		}
	case xComment:
		if c == '>' && prev == [2]byte{'-', '-'} {
			l.state, l.size = xText, 0
		}
	case xCDATA:
		if c == '>' && prev == [2]byte{']', ']'} {
			l.state, l.size = xText, 0
		}
	case xPI:
		if c == '>' && prev[1] == '?' {
			l.state, l.size = xText, 0
		}
	case xDecl: // as encoding/xml reads a directive: quoted brackets do not count
		switch {
		case l.quote != 0:
			if c == l.quote {
				l.quote = 0
			}
		case c == '"', c == '\'':
			l.quote = c
		case c == '<':
			l.nest++
		case c == '>' && l.nest > 0:
			l.nest--
		case c == '>':
			l.state, l.size = xText, 0
		}
	}
	if l.size > MaxXMLTokenBytes {
		return fileErr("line %d: an XML %s is longer than %d bytes: this is not a camt.053 statement", l.line, xmlUnit[l.state], MaxXMLTokenBytes)
	}
	return nil
}
