package recon

// StatementMapping is a bank account's saved column mapping: for a statement
// export whose layout Recon does not recognise by itself, the header of the
// column holding each field (docs/statements.md, Column mappings). The
// statement package checks and applies it.
type StatementMapping struct {
	Date       string `json:"date"`
	AmountIn   string `json:"amount_in,omitempty"`
	AmountOut  string `json:"amount_out,omitempty"`
	Amount     string `json:"amount,omitempty"`
	Content    string `json:"content"`
	Reference  string `json:"reference,omitempty"`
	Balance    string `json:"balance,omitempty"`
	SubAccount string `json:"sub_account,omitempty"`
	// OtherReferences are the headers of columns holding other references
	// of the same transfer (an end-to-end id, the bank's own number), kept
	// beside Reference for the possible-duplicate check (docs/statements.md,
	// References).
	OtherReferences []string `json:"other_references,omitempty"`
}
