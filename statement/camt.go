package statement

import (
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
	AcctSvcrRef  string     `xml:"AcctSvcrRef"`
	TxDtls       []camtTx   `xml:"NtryDtls>TxDtls"`
	AddtlNtryInf string     `xml:"AddtlNtryInf"`
}

func (p *parser) parseCAMT(r io.Reader) error {
	d := xml.NewDecoder(newBufReader(r))
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
			return led.close(closing, where())
		case xml.StartElement:
			switch t.Name.Local {
			case "Id":
				if err := d.DecodeElement(&id, &t); err != nil {
					return xmlErr(err)
				}
				id = strings.TrimSpace(id)
			case "Acct":
				var a camtAcct
				if err := d.DecodeElement(&a, &t); err != nil {
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
				if err := d.DecodeElement(&b, &t); err != nil {
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
				} else {
					opening, openingCode = &v, code
				}
			case "Ntry":
				if !started {
					led, started = newLedger(opening), true
				}
				row, _ := d.InputPos()
				var e camtEntry
				if err := d.DecodeElement(&e, &t); err != nil {
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
	return p.add(row, tx)
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
